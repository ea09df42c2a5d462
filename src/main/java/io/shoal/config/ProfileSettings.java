package io.shoal.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Which cache and upstream group serve names under some suffixes ({@code shoal.profiles.<name>}). */
public record ProfileSettings(String name, List<String> match, String cache, String upstreams) {

  /**
   * Reads and checks {@code shoal.profiles} (section {@code ps}): each suffix matched by one
   * profile only, {@code "."} by one of them, each naming one of {@code caches} and one of the
   * upstream {@code groups}.
   */
  static List<ProfileSettings> readAll(Section ps, Set<String> caches, Set<String> groups) {
    List<ProfileSettings> profiles = new ArrayList<>();
    Map<String, String> suffixOwner = new HashMap<>();
    for (String name : ps.children()) {
      Section p = ps.section(name);
      p.allowOnly("match", "cache", "upstreams");
      List<String> match = new ArrayList<>();
      for (String suffix : p.strings("match")) {
        String canonical = ShoalConfig.canonicalSuffix(suffix, p.key("match"));
        String other = suffixOwner.putIfAbsent(canonical, name);
        if (other != null) {
          throw new InvalidConfigException(
              p.key("match"), "'" + canonical + "' is already matched by profile '" + other + "'");
        }
        match.add(canonical);
      }
      if (match.isEmpty()) {
        throw new InvalidConfigException(p.key("match"), "list at least one name suffix, e.g. [\".\"]");
      }
      String cache = p.string("cache");
      if (!caches.contains(cache)) {
        throw new InvalidConfigException(
            p.key("cache"), "no cache named '" + cache + "'; defined caches: " + String.join(", ", caches));
      }
      String group = p.string("upstreams");
      if (!groups.contains(group)) {
        throw new InvalidConfigException(
            p.key("upstreams"),
            "no upstream group named '" + group + "'; defined groups: " + String.join(", ", groups));
      }
      profiles.add(new ProfileSettings(name, List.copyOf(match), cache, group));
    }
    if (!suffixOwner.containsKey(".")) {
      throw new InvalidConfigException(
          "shoal.profiles", "no profile matches \".\": every name needs a profile (add match = [\".\"] to one)");
    }
    return profiles;
  }
}
