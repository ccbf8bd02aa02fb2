package dev.ragline.opensearchlocal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.node.Node;
import org.opensearch.index.mapper.MapperExtrasPlugin;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * Starts a real single-node OpenSearch (HTTP on 127.0.0.1) in this JVM, with the plugins below
 * loaded straight from the classpath (no plugins/ or modules/ directories, no jar-hell scan).
 * Usage: LocalOpenSearch [HTTP_PORT [PORT_FILE [KEY=VALUE ...]]]   (HTTP_PORT 0 or absent = any free port).
 * Prints RAGLINE_OPENSEARCH_HOME=dir and RAGLINE_OPENSEARCH_PORT=port, and once HTTP is up writes
 * the port to PORT_FILE atomically; on SIGTERM it closes the node and deletes its throwaway home.
 * Each KEY=VALUE replaces a node setting (the launcher's cluster nodes: node.name, transport.port,
 * discovery.type=zen, discovery.seed_hosts, ...). A given path.home is used as is and kept on exit
 * (a restarted cluster node finds its data again; the launcher deletes it).
 */
public final class LocalOpenSearch {

    private static final List<Class<? extends Plugin>> PLUGINS = List.of(
        Netty4Plugin.class,          // real HTTP (and transport) layer
        pluginByName("org.opensearch.knn.plugin.KNNPlugin", "target/knn"),
                                     // knn_vector + knn query; only the pure-Java "lucene" engine works
        pluginByName("org.opensearch.neuralsearch.plugin.NeuralSearch", "target/neural"),
                                     // hybrid query, normalization-processor, score-ranker-processor
        CommonAnalysisPlugin.class,  // english & most other analyzers/filters
        ReindexPlugin.class,         // _delete_by_query, _update_by_query, _reindex
        PainlessPlugin.class,        // painless: the text field's scripted (per-scope BM25) similarity
        MapperExtrasPlugin.class     // token_count: each chunk's analysed length
    );

    /** k-NN and neural-search ship as plugin zips, not plain Maven jars: their jars are only on the runtime classpath. */
    private static Class<? extends Plugin> pluginByName(String className, String dir) {
        try {
            return Class.forName(className).asSubclass(Plugin.class);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(className + " missing from the classpath (" + dir + "/*)", e);
        }
    }

    /** Node's plugin-taking constructor is protected; this is the whole reason for the subclass. */
    private static final class LocalNode extends Node {
        LocalNode(Environment env) {
            super(env, PLUGINS, true);
        }
    }

    public static void main(String[] args) throws Exception {
        String port = args.length > 0 ? args[0] : "0";
        Settings.Builder overrides = Settings.builder();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("expected KEY=VALUE, got " + args[i]);
            }
            overrides.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        Settings given = overrides.build();
        String givenHome = given.get("path.home");
        boolean throwaway = givenHome == null;
        Path home = throwaway ? Files.createTempDirectory("ragline-opensearch-") : Path.of(givenHome);
        String nodeName = given.get("node.name", "ragline-local-0");
        for (String d : List.of("config", "data", "logs", "plugins", "modules")) {
            Files.createDirectories(home.resolve(d));
        }
        Files.writeString(home.resolve("config/log4j2.properties"), String.join("\n",
            "status = error",
            "appender.console.type = Console",
            "appender.console.name = console",
            "appender.console.layout.type = PatternLayout",
            "appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] [%node_name]%marker %m%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.console.ref = console",
            ""));

        Settings settings = Settings.builder()
            .put("cluster.name", "ragline-local")
            .put("node.name", nodeName)
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", port)
            .put("transport.port", "0")
            // a nearly full disk must not flip indices to read-only or block shard allocation
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", true)
            .put(given)
            .build();
        Environment env = new Environment(settings, home.resolve("config"));
        LogConfigurator.registerErrorListener();
        LogConfigurator.setNodeName(nodeName);
        LogConfigurator.configure(env);

        AtomicReference<Node> node = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                if (node.get() != null) {
                    node.get().close();
                    node.get().awaitClose(15, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                if (throwaway) {
                    deleteTree(home);
                }
                System.out.println("RAGLINE_OPENSEARCH_STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "ragline-opensearch-shutdown"));

        System.out.println("RAGLINE_OPENSEARCH_HOME=" + home);
        System.out.flush();
        try {
            node.set(new LocalNode(env));
            node.get().start();
            HttpServerTransport http = node.get().injector().getInstance(HttpServerTransport.class);
            int bound = http.boundAddress().publishAddress().getPort();
            System.out.println("RAGLINE_OPENSEARCH_PORT=" + bound);
            System.out.flush();
            if (args.length > 1) { // write-then-rename: a reader never sees a half-written port
                Path portFile = Path.of(args[1]).toAbsolutePath();
                Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
                Files.writeString(tmp, bound + "\n");
                Files.move(tmp, portFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1); // runs the shutdown hook: closes what started, deletes the home dir
        }
        stopped.await();
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not delete " + root + ": " + e);
        }
    }
}
