// Starts a Hive Metastore 2.3.10 for the tests (tests/hive_metastore.py), run as a single-file source program:
//   java -cp <pyspark's jars> tests/HiveMetastoreLauncher.java -p <port>
// with hive-site.xml on the classpath. DataNucleus creates the metastore's own tables (datanucleus.schema.autoCreateAll)
// but not the transaction tables that lock/check_lock/unlock need: TxnDbUtil.prepDb creates those first (hive.in.test
// would create them too, but then the server refuses lock requests with an unset operation type, as Paimon's).
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

public class HiveMetastoreLauncher {
    public static void main(String[] args) throws Throwable {
        TxnDbUtil.prepDb(new HiveConf());
        HiveMetaStore.main(args);
    }
}
