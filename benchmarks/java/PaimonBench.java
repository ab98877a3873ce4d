/*
 * The Java side of benchmarks/bench_vs_java.py: Paimon Java 1.0 (the paimon-python-ali bridge jar, the same jar as
 * tests/interop/java/PaimonJavaDriver.java) writes, reads, compacts and expires tables in ONE warm JVM, timing only
 * its own work with System.nanoTime around each operation. Compiled with `javac -cp paimon-python-java-bridge.jar`.
 *
 * Usage: java --add-opens=java.base/java.nio=ALL-UNNAMED -XX:ActiveProcessorCount=N -cp <jar>:<classes> PaimonBench -
 *
 * The spec arrives on stdin as one JSON object:
 *   {"warehouse": W, "fields": [{"name": N, "type": T}], "primaryKeys": [...],
 *    "writeOptions": {...}, "runOptions": {...},        table options of the write case / of the other cases
 *    "cases": ["write", "mor", "compact", "expire"], "warmup": k, "repeat": n, "retain": r,
 *    "warmupData": {"write": ipc, "runs": ipc, "expire": ipc}, "timedData": {...same...}}
 * Each data file is an Arrow IPC file whose record batches are the commits (write: one batch; runs: five; expire:
 * r + the snapshots to expire). All of them are loaded and converted to Paimon rows (BinaryRow copies) BEFORE any
 * timing: the Arrow -> Java conversion is not timed. Every case runs `warmup` times on the warm-up data (JIT warm-up,
 * reported apart, excluded from the medians), then `repeat` times on the timed data:
 *   write    create a table (writeOptions), then TIMED: BatchWriteBuilder -> write every row -> commit
 *   mor      create a table (runOptions: write-only), commit the five runs; TIMED: plan + read every row (all fields
 *            touched) of the merged table; one table per data set, read warmup/repeat times
 *   compact  a fresh five-run table per repetition; TIMED: copy(write-only=false) -> full compaction of every bucket
 *            (BatchTableWrite.compact(partition, bucket, true)) -> commit
 *   expire   a fresh table of len(expire batches) commits per repetition; TIMED: newExpireSnapshots() with
 *            retain-min = retain-max = r, time-retain 0, no delete limit
 * The result is printed on stdout after "@@RESULT@@ ": {"jvm": {...}, "cases": {case: {"warmup_ns": [...],
 * "ns": [...], "tables": [...], "rows": [...], "expired": [...]}}}; the tables stay for the caller's row-count check.
 */

import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.paimon.arrow.reader.ArrowBatchReader;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.reader.RecordReaderIterator;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowType;

public final class PaimonBench {
    private static final String RESULT_PREFIX = "@@RESULT@@ ";
    private static final String DATABASE = "bench";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final Catalog catalog;
    private final IOManager ioManager;
    private final JsonNode spec;
    private final RowType rowType;
    private final int retain;
    /** Folds every value read, so that no read can be optimised away. */
    private long sink;

    private PaimonBench(JsonNode spec) {
        this.spec = spec;
        Options options = new Options();
        options.set("warehouse", spec.get("warehouse").asText());
        this.catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
        this.ioManager = IOManager.create(System.getProperty("java.io.tmpdir"));
        List<DataField> fields = new ArrayList<>();
        int id = 0;
        for (JsonNode field : spec.get("fields")) {
            fields.add(new DataField(id++, field.get("name").asText(),
                    DataTypeJsonParser.parseDataType(field.get("type"))));
        }
        this.rowType = new RowType(fields);
        this.retain = spec.get("retain").asInt();
    }

    public static void main(String[] args) throws Exception {
        JsonNode spec = MAPPER.readTree(System.in.readAllBytes());
        PaimonBench bench = new PaimonBench(spec);
        ObjectNode result = MAPPER.createObjectNode();
        result.set("jvm", jvmInfo());
        ObjectNode cases = result.putObject("cases");
        Map<String, List<List<InternalRow>>> warm = bench.loadAll(spec.get("warmupData"));
        Map<String, List<List<InternalRow>>> timed = bench.loadAll(spec.get("timedData"));
        for (JsonNode name : spec.get("cases")) {
            cases.set(name.asText(), bench.runCase(name.asText(), warm, timed));
        }
        bench.catalog.close();
        bench.ioManager.close();
        result.put("sink", bench.sink);
        System.out.println(RESULT_PREFIX + MAPPER.writeValueAsString(result));
        System.out.flush();
    }

    private static ObjectNode jvmInfo() {
        ObjectNode jvm = MAPPER.createObjectNode();
        jvm.put("version", System.getProperty("java.vm.version"));
        jvm.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        jvm.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
        ArrayNode gcs = jvm.putArray("gc");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcs.add(gc.getName());
        }
        ArrayNode flags = jvm.putArray("flags");
        ManagementFactory.getRuntimeMXBean().getInputArguments().forEach(flags::add);
        return jvm;
    }

    // ------------------------------------------------------------------------------------------------- the data

    private Map<String, List<List<InternalRow>>> loadAll(JsonNode files) throws Exception {
        Map<String, List<List<InternalRow>>> out = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = files.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), load(e.getValue().asText()));
        }
        return out;
    }

    /** The record batches of an Arrow IPC file as lists of owned BinaryRows (the converter and the serializer reuse
     * their row). */
    private List<List<InternalRow>> load(String path) throws Exception {
        List<List<InternalRow>> batches = new ArrayList<>();
        ArrowBatchReader converter = new ArrowBatchReader(rowType);
        InternalRowSerializer serializer = new InternalRowSerializer(rowType);
        try (BufferAllocator allocator = new RootAllocator();
                FileChannel channel = FileChannel.open(Paths.get(path), StandardOpenOption.READ);
                ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            while (reader.loadNextBatch()) {
                List<InternalRow> rows = new ArrayList<>(root.getRowCount());
                for (InternalRow row : converter.readBatch(root)) {
                    rows.add(serializer.toBinaryRow(row).copy());
                }
                batches.add(rows);
            }
        }
        return batches;
    }

    // ------------------------------------------------------------------------------------------------ the cases

    private ObjectNode runCase(String name, Map<String, List<List<InternalRow>>> warm,
            Map<String, List<List<InternalRow>>> timed) throws Exception {
        ObjectNode out = MAPPER.createObjectNode();
        ArrayNode warmupNs = out.putArray("warmup_ns");
        ArrayNode ns = out.putArray("ns");
        ArrayNode tables = out.putArray("tables");
        ArrayNode rows = out.putArray("rows");
        ArrayNode expired = out.putArray("expired");
        int warmup = spec.get("warmup").asInt();
        int repeat = spec.get("repeat").asInt();
        if ("mor".equals(name)) { // reads do not change the table: one table per data set
            Table w = runsTable("mor_w", warm.get("runs"));
            for (int i = 0; i < warmup; i++) {
                warmupNs.add(readAll(w, null));
            }
            Table t = runsTable("mor_r", timed.get("runs"));
            for (int i = 0; i < repeat; i++) {
                ns.add(readAll(t, rows));
            }
            tables.add("mor_r");
            return out;
        }
        for (int i = 0; i < warmup + repeat; i++) {
            boolean isWarm = i < warmup;
            String table = name + (isWarm ? "_w" + i : "_r" + (i - warmup));
            Map<String, List<List<InternalRow>>> data = isWarm ? warm : timed;
            long nanos;
            switch (name) {
                case "write":
                    nanos = write(table, data.get("write").get(0));
                    break;
                case "compact":
                    nanos = compact(runsTable(table, data.get("runs")));
                    break;
                case "expire":
                    nanos = expire(runsTable(table, data.get("expire")), isWarm ? null : expired);
                    break;
                default:
                    throw new IllegalArgumentException("unknown case " + name);
            }
            (isWarm ? warmupNs : ns).add(nanos);
            if (!isWarm) {
                tables.add(table);
            }
        }
        return out;
    }

    private Table create(String name, JsonNode options) throws Exception {
        catalog.createDatabase(DATABASE, true);
        Schema.Builder builder = Schema.newBuilder();
        for (DataField field : rowType.getFields()) {
            builder.column(field.name(), field.type());
        }
        List<String> keys = new ArrayList<>();
        spec.get("primaryKeys").forEach(k -> keys.add(k.asText()));
        builder.primaryKey(keys);
        Iterator<Map.Entry<String, JsonNode>> it = options.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            builder.option(e.getKey(), e.getValue().asText());
        }
        Identifier identifier = Identifier.create(DATABASE, name);
        catalog.createTable(identifier, builder.build(), false);
        return catalog.getTable(identifier);
    }

    /** One commit of ``rows`` (untimed helper of the set-up). */
    private void commit(Table table, List<InternalRow> rows) throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager);
            for (InternalRow row : rows) {
                write.write(row);
            }
            commit.commit(write.prepareCommit());
        }
    }

    private Table runsTable(String name, List<List<InternalRow>> runs) throws Exception {
        Table table = create(name, spec.get("runOptions"));
        for (List<InternalRow> run : runs) {
            commit(table, run);
        }
        return table;
    }

    private long write(String name, List<InternalRow> rows) throws Exception {
        Table table = create(name, spec.get("writeOptions"));
        long start = System.nanoTime();
        commit(table, rows);
        return System.nanoTime() - start;
    }

    private long readAll(Table table, ArrayNode counts) throws Exception {
        long start = System.nanoTime();
        ReadBuilder builder = table.newReadBuilder();
        List<Split> splits = builder.newScan().plan().splits();
        long rows = 0;
        long fold = 0;
        int n = rowType.getFieldCount();
        List<InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            getters.add(InternalRow.createFieldGetter(rowType.getTypeAt(i), i));
        }
        RecordReader<InternalRow> reader = builder.newRead().createReader(splits);
        try (RecordReaderIterator<InternalRow> it = new RecordReaderIterator<>(reader)) {
            while (it.hasNext()) {
                InternalRow row = it.next();
                for (InternalRow.FieldGetter getter : getters) {
                    Object value = getter.getFieldOrNull(row);
                    fold = 31 * fold + (value == null ? 0 : value.hashCode());
                }
                rows++;
            }
        }
        long nanos = System.nanoTime() - start;
        sink += fold;
        if (counts != null) {
            counts.add(rows);
        }
        return nanos;
    }

    private long compact(Table table) throws Exception {
        long start = System.nanoTime();
        Table compacting = table.copy(Map.of("write-only", "false"));
        BatchWriteBuilder builder = compacting.newBatchWriteBuilder();
        Set<List<Object>> seen = new HashSet<>();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager);
            for (Split split : compacting.newReadBuilder().newScan().plan().splits()) {
                DataSplit dataSplit = (DataSplit) split;
                if (seen.add(Arrays.asList(dataSplit.partition(), dataSplit.bucket()))) {
                    write.compact(dataSplit.partition(), dataSplit.bucket(), true);
                }
            }
            commit.commit(write.prepareCommit());
        }
        return System.nanoTime() - start;
    }

    private long expire(Table table, ArrayNode expired) {
        ExpireConfig config = ExpireConfig.builder().snapshotRetainMin(retain).snapshotRetainMax(retain)
                .snapshotTimeRetain(Duration.ZERO).snapshotMaxDeletes(Integer.MAX_VALUE).build();
        long start = System.nanoTime();
        int count = table.newExpireSnapshots().config(config).expire();
        long nanos = System.nanoTime() - start;
        if (expired != null) {
            expired.add(count);
        }
        return nanos;
    }
}
