package dev.memlife.bench;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * Where the figures were measured: cores, CPU, memory, JDK, OS, and the disk under the temporary
 * directory (where every benchmark keeps its files). Linux's {@code /proc} and {@code /sys} give the
 * details; elsewhere they read "unknown".
 */
final class Machine {

    private Machine() {}

    static Map<String, Object> describe() {
        return BenchMain.entry("cores", Runtime.getRuntime().availableProcessors(),
                "cpu", cpuModel(),
                "memoryGiB", memoryGiB(),
                "java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                "os", osName() + ", " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                "disk", disk());
    }

    static String summary() {
        return Runtime.getRuntime().availableProcessors() + " cores, " + cpuModel() + ", Java "
                + System.getProperty("java.version");
    }

    /** The 1, 5 and 15 minute load averages, from {@code /proc/loadavg}; "unknown" elsewhere. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /**
     * The machine's CPU time and this process's, for {@link #otherProcessesCores}: from
     * {@code /proc/stat} and {@code /proc/self/stat} in clock ticks; null where they cannot be read.
     */
    static long[] cpuTicks() {
        try {
            String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+"); // "cpu user nice ..."
            long total = 0;
            long busy = 0;
            for (int i = 1; i < cpu.length && i <= 8; i++) { // user nice system idle iowait irq softirq steal
                long v = Long.parseLong(cpu[i]);
                total += v;
                busy += i == 4 || i == 5 ? 0 : v;
            }
            String self = Files.readString(Path.of("/proc/self/stat"));
            String[] f = self.substring(self.lastIndexOf(')') + 2).trim().split("\\s+"); // from field 3, the state
            // utime, stime, cutime, cstime: fields 14 to 17, the last two the waited-for children (JMH's forks)
            long own = Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
            return new long[] {total, busy, own};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The cores other processes kept busy between two {@link #cpuTicks} readings, on average (the
     * hypervisor's steal counted as theirs); null if either reading is missing.
     */
    static Double otherProcessesCores(long[] before, long[] after) {
        if (before == null || after == null || after[0] <= before[0]) {
            return null;
        }
        double others = Math.max(0, (after[1] - before[1]) - (after[2] - before[2]));
        return others / (after[0] - before[0]) * Runtime.getRuntime().availableProcessors();
    }

    private static String cpuModel() {
        String model = procField("/proc/cpuinfo", "model name");
        return model == null ? "unknown CPU" : model.replaceAll("\\s+", " ");
    }

    private static Object memoryGiB() {
        String total = procField("/proc/meminfo", "MemTotal"); // "24683792 kB"
        if (total == null) {
            return "unknown";
        }
        return Math.round(Long.parseLong(total.split("\\s+")[0]) / (1024.0 * 1024.0) * 10) / 10.0;
    }

    private static String osName() {
        String pretty = procField("/etc/os-release", "PRETTY_NAME");
        return pretty == null ? "unknown distribution" : pretty.replace("\"", "");
    }

    /** The file system of the temporary directory, its device, and the device's driver and size. */
    static String disk() {
        try {
            FileStore store = Files.getFileStore(Path.of(System.getProperty("java.io.tmpdir")));
            String device = store.name(); // "/dev/vda1" on Linux
            StringBuilder out = new StringBuilder(store.type() + " on " + device);
            String block = blockDevice(device);
            if (block != null) {
                Path sys = Path.of("/sys/block", block);
                String driver = Files.isSymbolicLink(sys.resolve("device/driver"))
                        ? Files.readSymbolicLink(sys.resolve("device/driver")).getFileName().toString() : null;
                String model = read(sys.resolve("device/model"));
                long sectors = Long.parseLong(read(sys.resolve("size")));
                out.append(" (");
                if (model != null && !model.isBlank()) {
                    out.append(model.trim()).append(", ");
                }
                if (driver != null) {
                    out.append(driver).append(", ");
                }
                out.append(String.format(Locale.ROOT, "%.0f GiB", sectors * 512 / (1024.0 * 1024 * 1024))).append(')');
            }
            return out.toString();
        } catch (IOException | RuntimeException e) {
            return "unknown disk";
        }
    }

    /** "vda" for "/dev/vda1" or "/dev/vda", "nvme0n1" for "/dev/nvme0n1p2"; null if none is found. */
    private static String blockDevice(String device) {
        if (!device.startsWith("/dev/")) {
            return null;
        }
        String name = device.substring("/dev/".length());
        for (String candidate : new String[] {name, name.replaceAll("p?\\d+$", "")}) {
            if (!candidate.isEmpty() && Files.isDirectory(Path.of("/sys/block", candidate))) {
                return candidate;
            }
        }
        return null;
    }

    private static String procField(String file, String key) {
        try {
            for (String line : Files.readAllLines(Path.of(file))) {
                String rest = line.startsWith(key) ? line.substring(key.length()).trim() : "";
                if (rest.startsWith(":") || rest.startsWith("=")) { // "model name\t: ...", "PRETTY_NAME=..."
                    return rest.substring(1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: unknown
        }
        return null;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
