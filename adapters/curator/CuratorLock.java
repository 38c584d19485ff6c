/*
 * CuratorLock.java - locklab adapter for Apache Curator's lock recipes
 * (Debian's libcurator-recipes-java, Curator 5.4): `mutex` drives
 * InterProcessMutex, `semaphore` InterProcessSemaphoreMutex.
 *
 * One CuratorFramework per process on LOCKLAB_ZK (session timeout from
 * LOCKLAB_ZK_SESSION_TIMEOUT_MS, else Curator's 60 s), one lock object per
 * key on /locklab/KEY, kept and reused as Curator's documentation says.
 * acquire(WAIT_MS) false is `timeout`; an IllegalMonitorStateException or
 * IllegalStateException from release() is `not-owner`. Otherwise release()
 * deletes this client's own node and ignores one already gone (an expired
 * session's): it cannot tell whether the lock was still ours, so the reply
 * is `released ?`, never the definite `released`. InterProcessMutex
 * is reentrant and its node's sequence number is a fencing token (plus one:
 * tokens are positive), so `mutex` says `ready fencing reentrant`;
 * InterProcessSemaphoreMutex exposes no node and is not reentrant: `ready`.
 * Protocol: docs/adapters.md. Built by CMake (javac) into classes/; run
 * through the curator-lock launcher next to this file.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorLock {
    /* InterProcessMutex with its lock node's path in reach (getLockPath is protected). */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        long token() {
            String p = getLockPath();
            return p == null ? 0 : Long.parseLong(p.substring(p.length() - 10)) + 1;
        }
    }

    private static String oneLine(Throwable e) {
        String s = e.getClass().getSimpleName() + ": " + e.getMessage();
        s = s.replace('\n', ' ');
        return s.length() > 200 ? s.substring(0, 200) : s;
    }

    public static void main(String[] args) throws Exception {
        boolean mutex = args.length == 1 && args[0].equals("mutex");
        if (!mutex && !(args.length == 1 && args[0].equals("semaphore"))) {
            System.err.println("usage: CuratorLock mutex|semaphore");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        String session = System.getenv("LOCKLAB_ZK_SESSION_TIMEOUT_MS");
        int sessionMs = session == null ? 60000 : Integer.parseInt(session);
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(System.getenv("LOCKLAB_ZK"))
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.start();
        if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) {
            System.err.println("curator: no connection to " + System.getenv("LOCKLAB_ZK"));
            System.exit(1);
        }
        Map<String, InterProcessLock> locks = new HashMap<>();
        out.print(mutex ? "ready fencing reentrant\n" : "ready\n");
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" +");
            if (w.length == 1 && w[0].equals("quit"))
                break;
            String reply;
            try {
                if (w.length == 4 && w[0].equals("acquire")) {
                    InterProcessLock lock = locks.get(w[1]);
                    if (lock == null) {
                        String path = "/locklab/" + w[1];
                        lock = mutex ? new Mutex(client, path) : new InterProcessSemaphoreMutex(client, path);
                        locks.put(w[1], lock);
                    }
                    if (lock.acquire(Long.parseLong(w[3]), TimeUnit.MILLISECONDS))
                        reply = mutex ? "granted " + ((Mutex) lock).token() : "granted";
                    else
                        reply = "timeout";
                } else if (w.length == 2 && w[0].equals("release")) {
                    InterProcessLock lock = locks.get(w[1]);
                    if (lock == null) {
                        reply = "not-owner";
                    } else {
                        try {
                            lock.release();
                            reply = "released ?"; /* a node already gone is ignored */
                        } catch (IllegalMonitorStateException | IllegalStateException e) {
                            reply = "not-owner";
                        }
                    }
                } else {
                    reply = "error unknown request";
                }
            } catch (Exception e) {
                reply = "error " + oneLine(e);
            }
            out.print(reply + "\n");
            out.flush();
        }
        client.close();
        System.exit(0);
    }
}
