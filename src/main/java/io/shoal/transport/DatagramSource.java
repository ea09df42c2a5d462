package io.shoal.transport;

import akka.stream.Attributes;
import akka.stream.Outlet;
import akka.stream.SourceShape;
import akka.stream.stage.AbstractOutHandler;
import akka.stream.stage.GraphStage;
import akka.stream.stage.GraphStageLogic;
import java.util.function.Supplier;

/**
 * A source that reads datagrams on the thread that runs it. Unlike {@code Source.unfoldResource},
 * it carries no dispatcher of its own, which in Akka 2.6 would put an async boundary between the
 * read and the stages after it; the flow that uses it sets the (reader) dispatcher for all of its
 * stages, so they stay fused on one thread. The reader returns null when the flow should end.
 */
final class DatagramSource<T> extends GraphStage<SourceShape<T>> {
  private final Outlet<T> out = Outlet.create("DatagramSource.out");
  private final SourceShape<T> shape = SourceShape.of(out);
  private final Supplier<T> reader;

  DatagramSource(Supplier<T> reader) {
    this.reader = reader;
  }

  @Override
  public SourceShape<T> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes inheritedAttributes) {
    return new GraphStageLogic(shape) {
      {
        setHandler(out, new AbstractOutHandler() {
          @Override
          public void onPull() {
            T next = reader.get();
            if (next == null) {
              completeStage();
            } else {
              push(out, next);
            }
          }
        });
      }
    };
  }
}
