package io.shoal.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What a new user reads first: every command listed with a summary that stands alone. */
class HelpTest {
  /** The lines of the Commands: block of {@code command}'s usage help. */
  private static List<String> commandLines(CommandLine command) {
    String[] lines = command.getUsageMessage(CommandLine.Help.Ansi.OFF).split("\n");
    List<String> block = new ArrayList<>();
    boolean in = false;
    for (String line : lines) {
      if (line.equals("Commands:")) {
        in = true;
      } else if (in && line.isBlank()) {
        break;
      } else if (in) {
        block.add(line);
      }
    }
    return block;
  }

  private static void everySummaryIsOneWholeSentence(CommandLine command) {
    List<String> block = commandLines(command);
    assertEquals(command.getSubcommands().size(), block.size(),
        "one line per command, none wrapped:\n" + String.join("\n", block));
    for (String line : block) {
      assertTrue(line.endsWith("."), "a summary ends its sentence: " + line);
    }
  }

  @Test
  void shoalListsEachCommandWithAOneLineSummary() {
    CommandLine shoal = ShoalCommand.commandLine();
    everySummaryIsOneWholeSentence(shoal);
    everySummaryIsOneWholeSentence(shoal.getSubcommands().get("cache"));
  }
}
