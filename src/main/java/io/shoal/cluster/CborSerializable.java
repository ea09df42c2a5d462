package io.shoal.cluster;

/** Marks messages that cross cluster nodes; bound to Akka's jackson-cbor serializer. */
public interface CborSerializable {}
