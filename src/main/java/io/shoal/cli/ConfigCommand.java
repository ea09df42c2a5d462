package io.shoal.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigRenderOptions;
import io.shoal.config.InvalidConfigException;
import io.shoal.config.ShoalConfig;
import io.shoal.loop.SelfUpstreamCheck;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code shoal config}: validate a configuration and print the effective {@code shoal} block. */
@Command(
    name = "config",
    header = "Check a configuration and print the settings in effect.",
    mixinStandardHelpOptions = true,
    description = {
      "Check the configuration the way serve would, without binding anything,",
      "and print the effective shoal { } block (defaults, file and -D merged).",
      "Exits 2 and names the key when a value is invalid.",
      "With --java-heap, print only the -Xmx option the caches' max_entries need."
    })
public final class ConfigCommand implements Callable<Integer> {
  @Mixin
  ConfigOptions options = new ConfigOptions();

  @Option(names = "--java-heap",
      description = "Print the heap option (-Xmx...) the configuration's cached answers need, nothing else.")
  boolean javaHeap;

  @Override
  public Integer call() {
    try {
      Config raw = options.load();
      ShoalConfig config = ShoalConfig.from(raw);
      SelfUpstreamCheck.refuse(config);
      if (javaHeap) {
        System.out.println(io.shoal.cache.HeapBudget.javaHeapOption(config));
        return 0;
      }
      System.out.println(com.typesafe.config.ConfigFactory.empty().withValue("shoal", raw.getValue("shoal"))
          .root().render(ConfigRenderOptions.defaults().setOriginComments(false).setJson(false)));
      return 0;
    } catch (InvalidConfigException e) {
      System.err.println("shoal: invalid configuration: " + e.getMessage());
      return 2;
    }
  }
}
