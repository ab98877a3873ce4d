// The part of the Hive Metastore's Thrift API that table_engine.catalog.hive uses, written for this project and parsed
// at run time by thriftpy2 (ADR 0044). Field ids, names, types and requiredness are those of Hive 2.3.10's generated
// classes: tests/table_engine/catalog/hive/test_idl_judge.py compares every field and method declared here with
// hive-metastore-2.3.10.jar by reflection (IdlJudge.java). Declare a struct's fields completely, so that a value read
// from the server and written back (alter_table) loses nothing.

namespace java org.apache.hadoop.hive.metastore.api

enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

enum LockLevel {
  DB = 1,
  TABLE = 2,
  PARTITION = 3,
}

enum LockType {
  SHARED_READ = 1,
  SHARED_WRITE = 2,
  EXCLUSIVE = 3,
}

enum LockState {
  ACQUIRED = 1,
  WAITING = 2,
  ABORT = 3,
  NOT_ACQUIRED = 4,
}

enum DataOperationType {
  SELECT = 1,
  INSERT = 2,
  UPDATE = 3,
  DELETE = 4,
  UNSET = 5,
  NO_TXN = 6,
}

struct PrivilegeGrantInfo {
  1: string privilege,
  2: i32 createTime,
  3: string grantor,
  4: PrincipalType grantorType,
  5: bool grantOption,
}

struct PrincipalPrivilegeSet {
  1: map<string, list<PrivilegeGrantInfo>> userPrivileges,
  2: map<string, list<PrivilegeGrantInfo>> groupPrivileges,
  3: map<string, list<PrivilegeGrantInfo>> rolePrivileges,
}

struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string, string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
}

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment,
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string, string> parameters,
}

struct Order {
  1: string col,
  2: i32 order,
}

struct SkewedInfo {
  1: list<string> skewedColNames,
  2: list<list<string>> skewedColValues,
  3: map<list<string>, string> skewedColValueLocationMaps,
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  9: list<Order> sortCols,
  10: map<string, string> parameters,
  11: optional SkewedInfo skewedInfo,
  12: optional bool storedAsSubDirectories,
}

struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string, string> parameters,
  10: string viewOriginalText,
  11: string viewExpandedText,
  12: string tableType,
  13: optional PrincipalPrivilegeSet privileges,
  14: optional bool temporary = false,
  15: optional bool rewriteEnabled,
  16: optional string catName,
}

struct Partition {
  1: list<string> values,
  2: string dbName,
  3: string tableName,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: StorageDescriptor sd,
  7: map<string, string> parameters,
  8: optional PrincipalPrivilegeSet privileges,
  9: optional string catName,
}

struct EnvironmentContext {
  1: map<string, string> properties,
}

struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: optional bool needResult = true,
  6: optional string catName,
}

struct AddPartitionsResult {
  1: optional list<Partition> partitions,
}

struct LockComponent {
  1: required LockType type,
  2: required LockLevel level,
  3: required string dbname,
  4: optional string tablename,
  5: optional string partitionname,
  6: optional DataOperationType operationType = DataOperationType.UNSET,
  7: optional bool isAcid = false,
  8: optional bool isDynamicPartitionWrite = false,
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: optional i64 txnid,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo = "Unknown",
}

struct LockResponse {
  1: required i64 lockid,
  2: required LockState state,
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: optional i64 txnid,
  3: optional i64 elapsed_ms,
}

struct UnlockRequest {
  1: required i64 lockid,
}

exception MetaException {
  1: string message,
}

exception NoSuchObjectException {
  1: string message,
}

exception AlreadyExistsException {
  1: string message,
}

exception InvalidObjectException {
  1: string message,
}

exception InvalidOperationException {
  1: string message,
}

exception UnknownDBException {
  1: string message,
}

exception NoSuchLockException {
  1: string message,
}

exception NoSuchTxnException {
  1: string message,
}

exception TxnAbortedException {
  1: string message,
}

exception TxnOpenException {
  1: string message,
}

service ThriftHiveMetastore {
  list<string> get_all_databases() throws (1: MetaException o1),
  Database get_database(1: string name) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void create_database(1: Database database)
      throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade)
      throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  void alter_database(1: string dbname, 2: Database db) throws (1: MetaException o1, 2: NoSuchObjectException o2),

  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1),
  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType)
      throws (1: MetaException o1),
  Table get_table(1: string dbname, 2: string tbl_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names)
      throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  void create_table(1: Table tbl) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2,
      3: MetaException o3, 4: NoSuchObjectException o4),
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl)
      throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl,
      4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o3),

  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request)
      throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals)
      throws (1: MetaException o1, 2: NoSuchObjectException o2),
  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData)
      throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts)
      throws (1: InvalidOperationException o1, 2: MetaException o2),
  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1)
      throws (1: MetaException o2),

  LockResponse lock(1: LockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  LockResponse check_lock(1: CheckLockRequest rqst)
      throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3),
  void unlock(1: UnlockRequest rqst) throws (1: NoSuchLockException o1, 2: TxnOpenException o2),
}
