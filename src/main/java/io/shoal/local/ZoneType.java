package io.shoal.local;

/** How a local zone answers the names at and below its apex (Unbound's local-zone types). */
public enum ZoneType {
  /** Local data when there is some for the name, else NXDOMAIN (NODATA for a name with other types). */
  STATIC("static"),
  /** Every name at or below the apex gets the apex's local data. */
  REDIRECT("redirect"),
  /** Local data when there is some for the name, else REFUSED. */
  REFUSE("refuse"),
  /** NXDOMAIN, whatever local data there is. */
  ALWAYS_NXDOMAIN("always_nxdomain"),
  /** Local data when there is some for the name, else resolved as usual. */
  TRANSPARENT("transparent");

  private final String configName;

  ZoneType(String configName) {
    this.configName = configName;
  }

  public String configName() {
    return configName;
  }

  /** The type named {@code word} in the configuration, or null. */
  static ZoneType named(String word) {
    for (ZoneType t : values()) {
      if (t.configName.equals(word)) {
        return t;
      }
    }
    return null;
  }
}
