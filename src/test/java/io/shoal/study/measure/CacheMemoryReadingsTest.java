package io.shoal.study.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What the cache_memory study reads: VmRSS from /proc/PID/status and the used heap from jcmd GC.heap_info. */
class CacheMemoryReadingsTest {

  @Test
  void vmRssIsReadInKibFromTheStatusFile() {
    String status = "Name:\tunbound\nVmPeak:\t  40000 kB\nVmRSS:\t   16680 kB\nRssAnon:\t    9000 kB\n";
    assertEquals(16680, ResidentSet.ofStatus(status));
    // a zombie or a kernel thread has no VmRSS line
    assertEquals(-1, ResidentSet.ofStatus("Name:\tkworker\nState:\tI (idle)\n"));
    assertEquals(-1, ResidentSet.ofStatus("VmRSS:\tlots kB\n"));
  }

  @Test
  void thisProcessHasAResidentSet() {
    assertTrue(ResidentSet.kib(ProcessHandle.current().pid()) > 0);
    assertEquals(-1, ResidentSet.kib(java.nio.file.Path.of("/proc/not-a-pid")));
  }

  @Test
  void theUsedHeapIsReadFromG1sLine() {
    String g1 = "9763:\n garbage-first heap   total 69632K, used 20427K [0x0000000700000000, 0x0000000800000000)\n"
        + "  region size 2048K, 1 young (2048K), 0 survivors (0K)\n Metaspace       used 48144K, committed 48512K\n";
    assertEquals(20427L, JvmHeap.usedKibOf(g1));
    // Metaspace's own "used" is not the heap's
    assertNull(JvmHeap.usedKibOf("9763:\n Metaspace       used 48144K, committed 48512K\n"));
  }
}
