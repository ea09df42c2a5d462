package io.shoal.study.server;

import io.shoal.study.host.Prerequisites;
import io.shoal.study.host.StartedProcesses;
import io.shoal.study.host.StudyException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The check that a member of a signed recipe answers as the study says it does: one query with DO
 * ({@code kdig +dnssec}) whose answer is NOERROR with the zone's RRSIG (DO reached knotd and came
 * back), with AD set if the member validates and clear if it does not. A study whose validating
 * member does not validate (no anchor, a broken chain, DO lost on the way) fails here instead of
 * measuring something else.
 */
public final class DnssecAnswerCheck {
  private static final Duration LIMIT = Duration.ofSeconds(20);

  private DnssecAnswerCheck() {}

  /** What one answer showed: its status, whether AD was set, whether the answer section had an RRSIG. */
  public record Seen(String status, boolean ad, boolean rrsig) {
    /** Why this answer is not what a member that does ({@code validating}) or does not validate gives; null if it is. */
    public String problem(boolean validating) {
      if (!"NOERROR".equals(status)) {
        return "status " + status + ", expected NOERROR";
      }
      if (!rrsig) {
        return "no RRSIG in the answer section: the DO bit did not reach the signed zone, or its answer came back "
            + "stripped";
      }
      if (validating && !ad) {
        return "AD is not set: the member did not validate the answer";
      }
      if (!validating && ad) {
        return "AD is set by a member that does not validate";
      }
      return null;
    }
  }

  /**
   * Asks {@code server} for {@code name} A with DO ({@code kdig +dnssec}), output kept in
   * {@code audit}; fails with what was wrong if the answer is not as said above.
   */
  public static Seen require(ServerUnderTest server, boolean validating, String name, Prerequisites.Tools tools,
      StartedProcesses processes, Path audit) throws StudyException {
    StartedProcesses.Completed c = processes.run(List.of(tools.path("kdig"), "@127.0.0.1", "-p",
        Integer.toString(server.port()), "+dnssec", "+retry=2", "+timeout=2", name, "A"), audit, LIMIT);
    if (c.exitCode() != 0) {
      throw new StudyException("kdig +dnssec " + name + " to " + server.label() + " failed (status " + c.exitCode()
          + "): " + c.output().strip());
    }
    Seen seen = parse(c.output());
    String problem = seen.problem(validating);
    if (problem != null) {
      throw new StudyException(server.label() + (validating ? " (validating)" : " (not validating)") + ", kdig +dnssec "
          + name + ": " + problem + " (see " + audit.getFileName() + ")");
    }
    return seen;
  }

  /** Reads kdig's text output: the status of the header line, the flags line, the answer section. */
  public static Seen parse(String kdig) {
    String status = "none";
    boolean ad = false;
    boolean rrsig = false;
    boolean inAnswer = false;
    for (String raw : kdig.lines().toList()) {
      String line = raw.strip();
      if (line.startsWith(";; ->>HEADER<<-")) {
        int at = line.indexOf("status:");
        if (at >= 0) {
          status = line.substring(at + "status:".length()).split(";")[0].strip();
        }
      } else if (line.startsWith(";; Flags:")) {
        String flags = line.substring(";; Flags:".length()).split(";")[0].strip().toLowerCase(Locale.ROOT);
        ad = List.of(flags.split("\\s+")).contains("ad");
      } else if (line.startsWith(";;")) {
        inAnswer = line.equals(";; ANSWER SECTION:");
      } else if (line.isEmpty()) {
        inAnswer = false;
      } else if (inAnswer && List.of(line.split("\\s+")).contains("RRSIG")) {
        rrsig = true;
      }
    }
    return new Seen(status, ad, rrsig);
  }
}
