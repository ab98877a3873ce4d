package net.openhft.hashing;

/** Test stub: XXH64 with seed 0 (written for the golden-bytes harness). */
public final class LongHashFunction {
    private static final long P1 = 0x9E3779B185EBCA87L, P2 = 0xC2B2AE3D27D4EB4FL, P3 = 0x165667B19E3779F9L,
            P4 = 0x85EBCA77C2B2AE63L, P5 = 0x27D4EB2F165667C5L;
    private static final LongHashFunction XX = new LongHashFunction();
    public static LongHashFunction xx() { return XX; }
    private static long le64(byte[] b, int i) {
        long r = 0; for (int k = 7; k >= 0; k--) r = (r << 8) | (b[i + k] & 0xFFL); return r;
    }
    private static long le32(byte[] b, int i) {
        long r = 0; for (int k = 3; k >= 0; k--) r = (r << 8) | (b[i + k] & 0xFFL); return r;
    }
    private static long round(long acc, long in) { acc += in * P2; acc = Long.rotateLeft(acc, 31); return acc * P1; }
    private static long merge(long acc, long v) { acc ^= round(0, v); return acc * P1 + P4; }
    public long hashBytes(byte[] b) {
        int n = b.length, i = 0; long h;
        if (n >= 32) {
            long v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1;
            while (i + 32 <= n) { v1 = round(v1, le64(b, i)); v2 = round(v2, le64(b, i + 8));
                v3 = round(v3, le64(b, i + 16)); v4 = round(v4, le64(b, i + 24)); i += 32; }
            h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
            h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4);
        } else { h = P5; }
        h += n;
        while (i + 8 <= n) { h ^= round(0, le64(b, i)); h = Long.rotateLeft(h, 27) * P1 + P4; i += 8; }
        if (i + 4 <= n) { h ^= le32(b, i) * P1; h = Long.rotateLeft(h, 23) * P2 + P3; i += 4; }
        while (i < n) { h ^= (b[i] & 0xFFL) * P5; h = Long.rotateLeft(h, 11) * P1; i++; }
        h ^= h >>> 33; h *= P2; h ^= h >>> 29; h *= P3; h ^= h >>> 32;
        return h;
    }
}
