package io.shoal.transport;

import org.junit.BeforeClass;

/**
 * {@link DotUpstreamSpec} with {@code shoal.tls.provider = jdk}: the DoT upstream connections made
 * by the JDK's TLS refuse, pin, pipeline and reconnect as Conscrypt's do.
 */
public class DotUpstreamJdkSpec extends DotUpstreamSpec {

  @BeforeClass
  public static void start() throws Exception {
    startWith("jdk");
  }
}
