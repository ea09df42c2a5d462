package io.shoal.reload;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shoal.config.ConfigLoader;
import io.shoal.config.ConfigSource;
import io.shoal.metrics.ReloadMetrics;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A reload that fails for any reason, an Error included, is refused and says why; it never escapes. */
class ReloadFailuresTest {
  private static Config config(String extra) {
    return ConfigFactory.parseString("shoal.upstreams.default.servers = [\"192.0.2.1:53\"]\n" + extra)
        .withFallback(ConfigLoader.load(Optional.empty())).resolve();
  }

  private static ConfigReload.Outcome reloadThrowing(Throwable thrown) {
    Config running = config("");
    ConfigReload reload = new ConfigReload(ConfigSource.fixed(running), running, (next, changed) -> {
      throw sneaky(thrown);
    }, new ReloadMetrics(null));
    return reload.reload("test", config("shoal.prefetch.enabled = off"));
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }

  @Test
  void anOutOfMemoryErrorBuildingTheNewTablesIsARefusedReload() {
    ConfigReload.Outcome outcome = reloadThrowing(new OutOfMemoryError("Java heap space"));
    assertFalse(outcome.applied());
    assertTrue(outcome.message().startsWith("configuration not reloaded") && outcome.message().contains("out of memory"),
        outcome.message());
  }

  @Test
  void anyOtherFailureIsARefusedReloadToo() {
    ConfigReload.Outcome outcome = reloadThrowing(new IllegalStateException("boom"));
    assertFalse(outcome.applied());
    assertTrue(outcome.message().contains("IllegalStateException: boom"), outcome.message());
    assertFalse(reloadThrowing(new StackOverflowError()).applied());
  }
}
