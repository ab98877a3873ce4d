package org.apache.paimon.data;
/** Harness stub: blobs are not needed for file indexes. */
public interface Blob {
    byte[] toData();
    default Object toDescriptor() { return null; }
    default org.apache.paimon.fs.SeekableInputStream newInputStream() throws java.io.IOException { return null; }
    static Blob fromData(byte[] data) { return new BlobData(data); }
    static Blob fromBytes(byte[] bytes, Object a, Object b) { return new BlobData(bytes); }
    static Blob fromBytes(byte[] bytes, Object a, Object b, boolean c) { return new BlobData(bytes); }
    static byte[] serializeBlob(Blob b) { return b.toData(); }
}
