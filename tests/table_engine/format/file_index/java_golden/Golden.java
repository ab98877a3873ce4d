// Test harness (not shipped): prints the bytes Apache Paimon's own Java file-index writers produce for the cases on
// stdin, so the Python implementation can be compared byte for byte. See README.md beside this file.
//
// Input, one case per line, tab-separated:
//   index <name> <index type> <type> <k=v;k=v options or -> <comma-separated values, "null" for null>
//   container <name> <column:indexType:hex, ...>      (FileIndexFormat over pre-serialized indexes, HashMap order)
// Output: "<name> <hex>" per case.
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.fileindex.FileIndexFormat;
import org.apache.paimon.fileindex.FileIndexWriter;
import org.apache.paimon.fileindex.bitmap.BitmapFileIndex;
import org.apache.paimon.fileindex.bloomfilter.BloomFilterFileIndex;
import org.apache.paimon.fileindex.bsi.BitSliceIndexBitmapFileIndex;
import org.apache.paimon.options.Options;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeRoot;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.TimestampType;
import org.apache.paimon.types.LocalZonedTimestampType;
import org.apache.paimon.types.DataTypes;

public class Golden {
    static DataType type(String s) {
        switch (s) {
            case "BOOLEAN": return DataTypes.BOOLEAN();
            case "TINYINT": return DataTypes.TINYINT();
            case "SMALLINT": return DataTypes.SMALLINT();
            case "INT": return DataTypes.INT();
            case "BIGINT": return DataTypes.BIGINT();
            case "FLOAT": return DataTypes.FLOAT();
            case "DOUBLE": return DataTypes.DOUBLE();
            case "STRING": return DataTypes.STRING();
            case "BYTES": return DataTypes.BYTES();
            case "DATE": return DataTypes.DATE();
            case "TIME": return DataTypes.TIME();
            case "TIMESTAMP3": return DataTypes.TIMESTAMP(3);
            case "TIMESTAMP6": return DataTypes.TIMESTAMP(6);
            case "TIMESTAMP_LTZ3": return DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3);
            case "DECIMAL10_2": return DataTypes.DECIMAL(10, 2);
            default: throw new IllegalArgumentException(s);
        }
    }

    static Object value(DataType t, String v) {
        if (v.equals("null")) return null;
        switch (t.getTypeRoot()) {
            case BOOLEAN: return Boolean.parseBoolean(v);
            case TINYINT: return Byte.parseByte(v);
            case SMALLINT: return Short.parseShort(v);
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return Integer.parseInt(v);
            case BIGINT: return Long.parseLong(v);
            case FLOAT: return Float.intBitsToFloat(Integer.parseUnsignedInt(v, 16));
            case DOUBLE: return Double.longBitsToDouble(Long.parseUnsignedLong(v, 16));
            case VARCHAR: case CHAR: return BinaryString.fromBytes(unhex(v));
            case VARBINARY: case BINARY: return unhex(v);
            case TIMESTAMP_WITHOUT_TIME_ZONE: case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                long micros = Long.parseLong(v);  // input is always epoch micros
                return Timestamp.fromMicros(micros);
            }
            case DECIMAL: {
                DecimalType d = (DecimalType) t;
                return Decimal.fromUnscaledLong(Long.parseLong(v), d.getPrecision(), d.getScale());
            }
            default: throw new IllegalArgumentException(t.toString());
        }
    }

    static byte[] unhex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            if (f[0].equals("index")) {
                DataType t = type(f[3]);
                Options options = new Options();
                if (!f[4].equals("-")) {
                    for (String kv : f[4].split(";")) {
                        String[] p = kv.split("=", 2);
                        options.set(p[0], p[1]);
                    }
                }
                FileIndexWriter w;
                switch (f[2]) {
                    case "bloom-filter": w = new BloomFilterFileIndex(t, options).createWriter(); break;
                    case "bitmap": w = new BitmapFileIndex(t, options).createWriter(); break;
                    case "bsi": w = new BitSliceIndexBitmapFileIndex(t).createWriter(); break;
                    default: throw new IllegalArgumentException(f[2]);
                }
                if (!f[5].isEmpty()) {
                    for (String v : f[5].split(",", -1)) w.writeRecord(value(t, v));
                }
                System.out.println(f[1] + " " + hex(w.serializedBytes()));
            } else if (f[0].equals("container")) {
                Map<String, Map<String, byte[]>> indexMaps = new HashMap<>();
                for (String item : f[2].split(",")) {
                    String[] p = item.split(":", 3);
                    String column = new String(unhex(p[0]), StandardCharsets.UTF_8);
                    byte[] bytes = p[2].equals("null") ? null : unhex(p[2]);
                    indexMaps.computeIfAbsent(column, k -> new HashMap<>()).put(p[1], bytes);
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (FileIndexFormat.Writer writer = FileIndexFormat.createWriter(out)) {
                    writer.writeColumnIndexes(indexMaps);
                }
                System.out.println(f[1] + " " + hex(out.toByteArray()));
            }
        }
    }
}
