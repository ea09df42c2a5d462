package io.shoal.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a dump is read: line and answer limits, the bounded list of problems, CRLF line ends. */
class AnswerDumpReadTest {
  private static final long NOW = 1_700_000_000_000L;

  private static String answer(String name, String address) {
    return "; shoal-answer " + name + " A IN key=- rcode=NOERROR flags=qr,rd,ra expires=" + (NOW + 60_000) + "\n"
        + "; answer\n" + name + "\t60\tIN\tA\t" + address + "\n";
  }

  private static AnswerDump.ReadCount read(String text, List<String> names) throws Exception {
    return AnswerDump.read(new StringReader(text), NOW, e -> names.add(e.key().name()));
  }

  @Test
  void aLineTooLongMakesItsAnswerUnreadableAndTheNextOneIsRead() throws Exception {
    String longTxt = "x".repeat(AnswerDump.MAX_LINE + 10);
    String text = "; shoal-dump v1 dumped=" + NOW + "\n"
        + "; shoal-answer long.test. TXT IN key=- rcode=NOERROR flags=qr expires=" + (NOW + 60_000) + "\n"
        + "; answer\nlong.test.\t60\tIN\tTXT\t\"" + longTxt + "\"\n"
        + answer("next.test.", "192.0.2.1");
    List<String> names = new ArrayList<>();
    AnswerDump.ReadCount read = read(text, names);
    assertEquals(List.of("next.test."), names);
    assertEquals(1, read.unreadable());
    assertEquals(2, read.firstProblems().get(0).line());
    assertTrue(read.firstProblems().get(0).why().contains("line 4 is longer than"));
  }

  @Test
  void onlyTheFirstTenProblemsAreKeptAndEveryOneIsCounted() throws Exception {
    StringBuilder text = new StringBuilder("; shoal-dump v1 dumped=" + NOW + "\r\n");
    for (int i = 0; i < 1000; i++) {
      text.append(answer("bad" + i + ".test.", "not-an-address").replace("\n", "\r\n"));
    }
    text.append(answer("good.test.", "192.0.2.1").replace("\n", "\r\n"));
    List<String> names = new ArrayList<>();
    AnswerDump.ReadCount read = read(text.toString(), names);
    assertEquals(List.of("good.test."), names);
    assertEquals(1000, read.unreadable());
    assertEquals(AnswerDump.PROBLEMS_SHOWN, read.firstProblems().size());
    assertEquals("bad9.test.", read.firstProblems().get(9).name());
    assertEquals(2 + 9 * 3, read.firstProblems().get(9).line());
  }
}
