package dev.outboxreplay;

/**
 * Tells the replayer when the network comes back, and, if it can, when it goes away. The HTTP module's default probes the receiver
 * cheaply, with backoff while it is down; an application with its own network callbacks can call
 * {@link Replayer#onNetworkAvailable()} instead and use {@link #NONE}.
 */
public interface ConnectivityMonitor extends AutoCloseable {
  /** Watches nothing. */
  ConnectivityMonitor NONE = new ConnectivityMonitor() {
    @Override
    public void start(Runnable onNetworkAvailable) {}

    @Override
    public void close() {}
  };

  /** Starts watching; calls {@code onNetworkAvailable} each time the network comes back. */
  void start(Runnable onNetworkAvailable);

  /**
   * Starts watching and also reports when the network goes away, so that replay holds without
   * making requests ({@link Replayer#onNetworkLost()}). The replayer calls this one. The default
   * reports network-up only.
   */
  default void start(Runnable onNetworkAvailable, Runnable onNetworkLost) {
    start(onNetworkAvailable);
  }

  @Override
  void close();
}
