// The judge of table_engine/catalog/hive/hive_metastore.thrift (tests/table_engine/catalog/hive/test_idl_judge.py):
// prints, as one JSON object, what the real hive-metastore jar's generated classes say about the structs, enums and
// ThriftHiveMetastore methods named on the command line (field id, name, type, requiredness), read by reflection.
//   java -cp <hive-metastore-2.3.10.jar>:<libthrift-0.16.0.jar>:... IdlJudge.java struct:Table enum:LockType method:lock
import java.lang.reflect.Field;
import java.util.Map;
import java.util.TreeMap;
import org.apache.thrift.TEnum;
import org.apache.thrift.TFieldIdEnum;
import org.apache.thrift.meta_data.EnumMetaData;
import org.apache.thrift.meta_data.FieldMetaData;
import org.apache.thrift.meta_data.FieldValueMetaData;
import org.apache.thrift.meta_data.ListMetaData;
import org.apache.thrift.meta_data.MapMetaData;
import org.apache.thrift.meta_data.SetMetaData;
import org.apache.thrift.meta_data.StructMetaData;
import org.apache.thrift.protocol.TType;

public class IdlJudge {
    static final String API = "org.apache.hadoop.hive.metastore.api.";

    static String type(FieldValueMetaData m) {
        if (m instanceof ListMetaData) {
            return "list<" + type(((ListMetaData) m).elemMetaData) + ">";
        }
        if (m instanceof SetMetaData) {
            return "set<" + type(((SetMetaData) m).elemMetaData) + ">";
        }
        if (m instanceof MapMetaData) {
            MapMetaData map = (MapMetaData) m;
            return "map<" + type(map.keyMetaData) + "," + type(map.valueMetaData) + ">";
        }
        if (m instanceof StructMetaData) {
            return "struct:" + ((StructMetaData) m).structClass.getSimpleName();
        }
        if (m instanceof EnumMetaData) {
            return "enum:" + ((EnumMetaData) m).enumClass.getSimpleName();
        }
        switch (m.type) {
            case TType.BOOL: return "bool";
            case TType.BYTE: return "byte";
            case TType.I16: return "i16";
            case TType.I32: return "i32";
            case TType.I64: return "i64";
            case TType.DOUBLE: return "double";
            case TType.STRING: return m.isBinary() ? "binary" : "string";
            case TType.STRUCT: return "struct:" + m.getTypedefName();  // a forward reference: by name only
            default: return "ttype" + m.type;
        }
    }

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    @SuppressWarnings("unchecked")
    static String fields(Class<?> c) throws Exception {
        Field f = c.getField("metaDataMap");
        Map<? extends TFieldIdEnum, FieldMetaData> map = (Map<? extends TFieldIdEnum, FieldMetaData>) f.get(null);
        TreeMap<Short, String> out = new TreeMap<>();
        for (Map.Entry<? extends TFieldIdEnum, FieldMetaData> e : map.entrySet()) {
            FieldMetaData meta = e.getValue();
            out.put(e.getKey().getThriftFieldId(), "{\"id\":" + e.getKey().getThriftFieldId() + ",\"name\":"
                    + quote(meta.fieldName) + ",\"type\":" + quote(type(meta.valueMetaData))
                    + ",\"required\":" + (meta.requirementType == 1) + "}");
        }
        return "[" + String.join(",", out.values()) + "]";
    }

    static String enumValues(Class<?> c) {
        StringBuilder sb = new StringBuilder("{");
        for (Object o : c.getEnumConstants()) {
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append(quote(((Enum<?>) o).name())).append(':').append(((TEnum) o).getValue());
        }
        return sb.append('}').toString();
    }

    public static void main(String[] args) throws Exception {
        StringBuilder sb = new StringBuilder("{");
        for (String arg : args) {
            String kind = arg.substring(0, arg.indexOf(':'));
            String name = arg.substring(arg.indexOf(':') + 1);
            String value;
            try {
                switch (kind) {
                    case "struct":
                        value = fields(Class.forName(API + name));
                        break;
                    case "enum":
                        value = enumValues(Class.forName(API + name));
                        break;
                    case "method":
                        value = "{\"args\":" + fields(Class.forName(API + "ThriftHiveMetastore$" + name + "_args"))
                                + ",\"result\":" + fields(Class.forName(API + "ThriftHiveMetastore$" + name + "_result"))
                                + "}";
                        break;
                    default:
                        throw new IllegalArgumentException(arg);
                }
            } catch (ClassNotFoundException e) {
                value = "null";
            }
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append(quote(arg)).append(':').append(value);
        }
        System.out.println(sb.append('}'));
    }
}
