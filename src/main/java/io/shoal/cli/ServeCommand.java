package io.shoal.cli;

import akka.Done;
import com.typesafe.config.Config;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.server.ShoalServer;
import io.shoal.server.StartupException;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import sun.misc.Signal;

/** {@code shoal serve}: run a node until SIGTERM or SIGINT. */
@Command(
    name = "serve",
    header = "Answer DNS over UDP and TCP until stopped.",
    mixinStandardHelpOptions = true,
    description = {
      "With no --config the embedded defaults apply: 127.0.0.1:5353, a memory cache,",
      "the nameservers of /etc/resolv.conf upstream, metrics at http://127.0.0.1:9095/metrics.",
      "SIGTERM or SIGINT stops accepting queries, finishes those in flight and exits 0."
    })
public final class ServeCommand implements Callable<Integer> {
  @Mixin
  ConfigOptions options = new ConfigOptions();

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
    ShoalServer server;
    try {
      Config raw = options.load();
      server = ShoalServer.start(raw, ShoalConfig.from(raw), System::currentTimeMillis);
    } catch (InvalidConfigException e) {
      System.err.println("shoal: invalid configuration: " + e.getMessage());
      return 2;
    } catch (StartupException e) {
      System.err.println("shoal: " + e.getMessage());
      return 1;
    }
    running.set(server);
    if (stopRequested.get()) {
      server.stop();
    }
    Done done = server.whenTerminated().toCompletableFuture().join();
    return done == null ? 1 : 0;
  }
}
