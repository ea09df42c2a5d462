package io.shoal.cli;

import akka.Done;
import com.typesafe.config.Config;
import io.shoal.cache.lmdb.CacheShard;
import io.shoal.config.ConfigSource;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.reload.ConfigReload;
import io.shoal.server.ShoalServer;
import io.shoal.server.StartupException;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/** {@code shoal serve}: run a node until SIGTERM or SIGINT. */
@Command(
    name = "serve",
    header = "Answer DNS over UDP and TCP until stopped.",
    mixinStandardHelpOptions = true,
    description = {
      "With no --config the embedded defaults apply: 127.0.0.1:5353, a memory cache,",
      "the nameservers of /etc/resolv.conf upstream, metrics at http://127.0.0.1:9095/metrics.",
      "SIGTERM or SIGINT stops accepting queries, finishes those in flight and exits 0.",
      "SIGHUP reloads the configuration file without a restart (as `shoal reload` does);",
      "a config that cannot be applied is refused and logged, and the running one kept."
    })
public final class ServeCommand implements Callable<Integer> {
  @Mixin
  ConfigOptions options = new ConfigOptions();

  private static final Signal HUP = new Signal("HUP");

  @Override
  public Integer call() {
    // Handlers first (our own instead of the JVM's, so an orderly stop exits 0 rather than 143):
    // the node looks up (/metrics answers) a moment before start returns, and a SIGTERM in that
    // moment must stop it in order too.
    AtomicBoolean stopRequested = new AtomicBoolean();
    AtomicReference<ShoalServer> running = new AtomicReference<>();
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), sig -> {
        if (stopRequested.compareAndSet(false, true) && running.get() != null) {
          running.get().stop();
        }
      });
    }
    // One SIGHUP handler for the whole life of the process: before the node is up a signal is
    // remembered and the file read again once it is (the node says it answers, and a client may
    // change the file and signal, a moment before start returns).
    AtomicBoolean hupWhileStarting = new AtomicBoolean();
    SignalHandler previous = Signal.handle(HUP, sig -> {
      hupWhileStarting.set(true);
      ShoalServer up = running.get();
      if (up != null && hupWhileStarting.getAndSet(false)) {
        reloadOnSignal(up, stopRequested);
      }
    });
    if (previous == SignalHandler.SIG_IGN) {
      // The JVM keeps an inherited "ignore" (nohup, some service managers) and will not take it over.
      System.err.println("shoal: SIGHUP is ignored in this process (started under nohup?), so it"
          + " cannot reload the configuration; use `shoal reload` or shoal.reload.watch = on");
    }
    ShoalServer server;
    try {
      ConfigSource source = options.source();
      Config raw = source.load();
      server = ShoalServer.start(raw, ShoalConfig.from(raw), System::currentTimeMillis, CacheShard.Opener.FILES, source);
    } catch (InvalidConfigException e) {
      System.err.println("shoal: invalid configuration: " + e.getMessage());
      return 2;
    } catch (StartupException e) {
      System.err.println("shoal: " + e.getMessage());
      return 1;
    } catch (RuntimeException | Error e) {
      // One line and an exit, never a main thread gone and a JVM left running that neither serves
      // nor stops (the actor system's threads keep it alive).
      System.err.println("shoal: cannot start: " + ConfigReload.reason(e));
      return 1;
    }
    running.set(server);
    if (stopRequested.get()) {
      server.stop();
    }
    if (hupWhileStarting.getAndSet(false)) {
      reloadOnSignal(server, stopRequested);
    }
    Done done = server.whenTerminated().toCompletableFuture().join();
    return done == null ? 1 : 0;
  }

  /** SIGHUP: reload, off the signal thread (it may read large files); the outcome is logged. */
  private static void reloadOnSignal(ShoalServer server, AtomicBoolean stopRequested) {
    if (stopRequested.get()) {
      return;
    }
    Thread t = new Thread(() -> server.reload("SIGHUP"), "shoal-reload");
    t.setDaemon(true);
    // The signal thread has none, and the config library looks up its defaults through it.
    t.setContextClassLoader(ServeCommand.class.getClassLoader());
    t.start();
  }
}
