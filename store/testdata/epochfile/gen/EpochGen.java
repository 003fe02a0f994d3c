package gen;

import java.io.File;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.EpochEntry;
import org.apache.rocketmq.store.ha.autoswitch.EpochFileCache;

/**
 * Writes epoch files with Apache RocketMQ's own EpochFileCache (5.3.x) into
 * args[0]/<case>/epochFileCheckpoint (+ .bak), and prints what Apache reads
 * back from each, so store/epochfile_test.go compares against Apache's bytes
 * and Apache's view. Regenerate with ../gen.sh.
 */
public class EpochGen {
    public static void main(String[] args) throws Exception {
        File root = new File(args[0]);

        EpochFileCache three = open(root, "three");
        check(three.appendEntry(new EpochEntry(1, 0)));
        check(three.appendEntry(new EpochEntry(2, 1024)));
        check(three.appendEntry(new EpochEntry(5, 409600)));
        check(!three.appendEntry(new EpochEntry(5, 500000)));
        check(!three.appendEntry(new EpochEntry(6, 409600)));
        dump("three", three);

        EpochFileCache suffix = open(root, "suffix");
        check(suffix.appendEntry(new EpochEntry(1, 0)));
        check(suffix.appendEntry(new EpochEntry(2, 1024)));
        check(suffix.appendEntry(new EpochEntry(3, 2048)));
        suffix.truncateSuffixByOffset(1500);
        dump("suffix", suffix);

        EpochFileCache prefix = open(root, "prefix");
        check(prefix.appendEntry(new EpochEntry(1, 0)));
        check(prefix.appendEntry(new EpochEntry(2, 1024)));
        check(prefix.appendEntry(new EpochEntry(3, 2048)));
        prefix.truncatePrefixByOffset(1024);
        dump("prefix", prefix);

        EpochFileCache big = open(root, "big");
        check(big.appendEntry(new EpochEntry(7, 1073741824L)));
        check(big.appendEntry(new EpochEntry(Integer.MAX_VALUE, Long.MAX_VALUE - 1)));
        dump("big", big);

        // findConsistentPoint between a slave that wrote a divergent tail in
        // epoch 3 and a master that moved on to epoch 4.
        EpochFileCache slave = open(root, "slave");
        check(slave.appendEntry(new EpochEntry(1, 0)));
        check(slave.appendEntry(new EpochEntry(2, 1000)));
        check(slave.appendEntry(new EpochEntry(3, 3000)));
        slave.setLastEpochEntryEndOffset(3500);
        EpochFileCache master = open(root, "master");
        check(master.appendEntry(new EpochEntry(1, 0)));
        check(master.appendEntry(new EpochEntry(2, 1000)));
        check(master.appendEntry(new EpochEntry(4, 2600)));
        master.setLastEpochEntryEndOffset(5000);
        System.out.println("consistent slave/master " + slave.findConsistentPoint(master));
        System.out.println("consistent master/slave " + master.findConsistentPoint(slave));
    }

    static EpochFileCache open(File root, String name) {
        File dir = new File(root, name);
        dir.mkdirs();
        EpochFileCache c = new EpochFileCache(new File(dir, "epochFileCheckpoint").getPath());
        check(c.initCacheFromFile());
        return c;
    }

    static void dump(String name, EpochFileCache c) {
        List<EpochEntry> all = c.getAllEntries();
        StringBuilder sb = new StringBuilder(name);
        for (EpochEntry e : all) {
            sb.append(' ').append(e.getEpoch()).append('-').append(e.getStartOffset()).append('-').append(e.getEndOffset());
        }
        System.out.println(sb);
    }

    static void check(boolean ok) {
        if (!ok) {
            throw new IllegalStateException("unexpected result");
        }
    }
}
