package io.shoal.study.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** The machine a study ran on, as the summary reports it: absolute numbers only hold for it. */
public record HostFacts(String cpuModel, int cores, String kernel, String dataDisk) {

  /** Reads /proc and /sys; anything unreadable is reported as unknown rather than failing the study. */
  public static HostFacts probe(Path dataPath) {
    return new HostFacts(readCpuModel(), Runtime.getRuntime().availableProcessors(), readKernel(), disk(dataPath));
  }

  private static String readCpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).strip();
        }
      }
    } catch (IOException e) {
      // not Linux, or /proc hidden
    }
    return "unknown (" + System.getProperty("os.arch") + ")";
  }

  private static String readKernel() {
    try {
      return System.getProperty("os.name") + " "
          + Files.readString(Path.of("/proc/sys/kernel/osrelease"), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return System.getProperty("os.name") + " " + System.getProperty("os.version");
    }
  }

  /**
   * The kind of storage under {@code path}: the file system type, and for a block device whether
   * /sys/block/DEV/queue/rotational says it spins. LMDB's sync modes cost what the device's
   * flushes cost, so this decides how far the numbers travel.
   */
  static String disk(Path path) {
    String fsType = "unknown file system";
    try {
      FileStore store = Files.getFileStore(path);
      fsType = store.type();
      if (fsType.equals("tmpfs") || fsType.equals("ramfs")) {
        return fsType + " (memory, no disk: fsync costs nothing here)";
      }
      Long dev = (Long) Files.getAttribute(path, "unix:dev");
      String device = blockDevice(dev);
      if (device != null) {
        return fsType + " on " + device;
      }
      return fsType + " on " + store.name() + " (no block device found in /sys for it; rotational unknown)";
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
      return fsType + " (device unknown: " + e.getMessage() + ")";
    }
  }

  private static String blockDevice(long dev) throws IOException {
    // Linux's dev_t encoding (glibc's gnu_dev_major/minor).
    long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
    long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
    Path sys = Path.of("/sys/dev/block", major + ":" + minor);
    if (!Files.exists(sys)) {
      return null;
    }
    Path real = sys.toRealPath();
    for (Path candidate : List.of(real, real.getParent())) {
      Path rotational = candidate.resolve("queue/rotational");
      if (Files.isRegularFile(rotational)) {
        String disk = candidate.getFileName().toString();
        boolean spins = Files.readString(rotational).strip().equals("1");
        String part = candidate.equals(real) ? disk : real.getFileName() + " (on " + disk + ")";
        // Virtual disks report whatever the hypervisor chose, so say what the kernel reports, not more.
        return part + ", /sys/block/" + disk + "/queue/rotational = " + (spins ? "1 (rotational: a spinning disk, "
            + "or a virtual disk that reports itself as one)" : "0 (non-rotational: SSD, NVMe or a virtual disk)");
      }
    }
    return real.getFileName().toString().toLowerCase(Locale.ROOT) + " (no queue/rotational: rotational unknown)";
  }
}
