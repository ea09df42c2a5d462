package io.shoal.transport.tls;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.BiFunction;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;

/**
 * A server {@link SSLEngine} that reports its own handshake failing, once, to {@code onFailure}. A failure is
 * an SSLException before the handshake finished: a client that refuses the certificate (its alert
 * arrives), bytes that are not TLS, no common version or cipher, or a peer that leaves half-way
 * through the handshake. A connection that closes before sending anything (a TCP health check)
 * never gets that far and is not counted; nor is one that leaves after its handshake.
 * It also refuses a client's TLS 1.2 renegotiation (a fresh handshake on an open connection costs
 * the server a key exchange each time the client asks): the connection is closed instead, and
 * {@code onRenegotiation} told. Everything else is the wrapped engine's.
 */
public final class CountedHandshakeEngine extends SSLEngine {
  private final SSLEngine engine;
  private final Runnable onFailure;
  private final Runnable onRenegotiation;
  // Used by one connection's selector thread at a time.
  private boolean received;
  private boolean finished;
  private boolean counted;

  public CountedHandshakeEngine(SSLEngine engine, Runnable onFailure, Runnable onRenegotiation) {
    super(engine.getPeerHost(), engine.getPeerPort());
    this.engine = engine;
    this.onFailure = onFailure;
    this.onRenegotiation = onRenegotiation;
  }

  private SSLEngineResult seen(SSLEngineResult r) {
    if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED) {
      finished = true;
    }
    return r;
  }

  private SSLException failed(SSLException e) {
    if (!finished && !counted) {
      counted = true;
      onFailure.run();
    }
    return e;
  }

  @Override
  public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
    try {
      return seen(engine.wrap(srcs, offset, length, dst));
    } catch (SSLException e) {
      throw failed(e);
    }
  }

  @Override
  public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
    received |= src.hasRemaining();
    if (finished && handshakeRecord(src) && "TLSv1.2".equals(engine.getSession().getProtocol())) {
      // Refused before the engine sees it: the JDK's would start a new handshake, Conscrypt's
      // (BoringSSL) fails with an alert of its own that does not say why.
      onRenegotiation.run();
      throw new SSLException("client-initiated renegotiation refused");
    }
    SSLEngineResult r;
    try {
      r = seen(engine.unwrap(src, dsts, offset, length));
    } catch (SSLException e) {
      throw failed(e);
    }
    if (finished && renegotiating(r)) {
      onRenegotiation.run();
      throw new SSLException("client-initiated renegotiation refused");
    }
    return r;
  }

  /** Whether the next record in {@code src} is a handshake record (content type 22). */
  private static boolean handshakeRecord(ByteBuffer src) {
    return src.hasRemaining() && src.get(src.position()) == 22;
  }

  /**
   * After the handshake, only a client's new ClientHello sets a TLS 1.2 engine handshaking again
   * (the server never asks); TLS 1.3 has no renegotiation, and its post-handshake messages (key
   * updates, tickets) are left alone.
   */
  private boolean renegotiating(SSLEngineResult r) {
    SSLEngineResult.HandshakeStatus status = r.getHandshakeStatus();
    return status != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
        && status != SSLEngineResult.HandshakeStatus.FINISHED
        && "TLSv1.2".equals(engine.getSession().getProtocol());
  }

  @Override
  public void closeInbound() throws SSLException {
    try {
      engine.closeInbound();
    } catch (SSLException e) {
      // the engine also complains of a peer that closed without close_notify after saying nothing
      throw received ? failed(e) : e;
    }
  }

  @Override
  public Runnable getDelegatedTask() {
    return engine.getDelegatedTask();
  }

  @Override
  public boolean isInboundDone() {
    return engine.isInboundDone();
  }

  @Override
  public void closeOutbound() {
    engine.closeOutbound();
  }

  @Override
  public boolean isOutboundDone() {
    return engine.isOutboundDone();
  }

  @Override
  public String[] getSupportedCipherSuites() {
    return engine.getSupportedCipherSuites();
  }

  @Override
  public String[] getEnabledCipherSuites() {
    return engine.getEnabledCipherSuites();
  }

  @Override
  public void setEnabledCipherSuites(String[] suites) {
    engine.setEnabledCipherSuites(suites);
  }

  @Override
  public String[] getSupportedProtocols() {
    return engine.getSupportedProtocols();
  }

  @Override
  public String[] getEnabledProtocols() {
    return engine.getEnabledProtocols();
  }

  @Override
  public void setEnabledProtocols(String[] protocols) {
    engine.setEnabledProtocols(protocols);
  }

  @Override
  public SSLSession getSession() {
    return engine.getSession();
  }

  @Override
  public SSLSession getHandshakeSession() {
    return engine.getHandshakeSession();
  }

  @Override
  public void beginHandshake() throws SSLException {
    try {
      engine.beginHandshake();
    } catch (SSLException e) {
      throw failed(e);
    }
  }

  @Override
  public SSLEngineResult.HandshakeStatus getHandshakeStatus() {
    return engine.getHandshakeStatus();
  }

  @Override
  public void setUseClientMode(boolean mode) {
    engine.setUseClientMode(mode);
  }

  @Override
  public boolean getUseClientMode() {
    return engine.getUseClientMode();
  }

  @Override
  public void setNeedClientAuth(boolean need) {
    engine.setNeedClientAuth(need);
  }

  @Override
  public boolean getNeedClientAuth() {
    return engine.getNeedClientAuth();
  }

  @Override
  public void setWantClientAuth(boolean want) {
    engine.setWantClientAuth(want);
  }

  @Override
  public boolean getWantClientAuth() {
    return engine.getWantClientAuth();
  }

  @Override
  public void setEnableSessionCreation(boolean flag) {
    engine.setEnableSessionCreation(flag);
  }

  @Override
  public boolean getEnableSessionCreation() {
    return engine.getEnableSessionCreation();
  }

  @Override
  public SSLParameters getSSLParameters() {
    return engine.getSSLParameters();
  }

  @Override
  public void setSSLParameters(SSLParameters params) {
    engine.setSSLParameters(params);
  }

  @Override
  public String getApplicationProtocol() {
    return engine.getApplicationProtocol();
  }

  @Override
  public String getHandshakeApplicationProtocol() {
    return engine.getHandshakeApplicationProtocol();
  }

  @Override
  public void setHandshakeApplicationProtocolSelector(BiFunction<SSLEngine, List<String>, String> selector) {
    engine.setHandshakeApplicationProtocolSelector(selector);
  }

  @Override
  public BiFunction<SSLEngine, List<String>, String> getHandshakeApplicationProtocolSelector() {
    return engine.getHandshakeApplicationProtocolSelector();
  }
}
