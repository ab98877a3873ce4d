// Harness stub replacing an unused Hadoop import of BloomFilterFileIndex (javadoc reference only).
package org.apache.hadoop.util.bloom; public class HashFunction {}
