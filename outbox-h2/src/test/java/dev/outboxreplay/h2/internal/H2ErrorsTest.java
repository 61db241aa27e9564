package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.h2.message.DbException;
import org.h2.mvstore.DataUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which H2 failures count as the database having gone away. The exceptions are H2's own, made
 * by H2's own code paths ({@link DbException#convert}), so a change in H2's wording fails here.
 */
class H2ErrorsTest {
  /** The error a statement gets when the closing database rolled its transaction back. */
  private static SQLException transactionNot(String status, int mvStoreError) {
    return DbException.convert(DataUtils.newMVStoreException(mvStoreError,
        "Transaction {0} has status {1}, not OPEN", 1, status)).getSQLException();
  }

  @Test
  void aTransactionRolledBackUnderARunningStatementIsAHandover() {
    SQLException rolledBack = transactionNot("ROLLED_BACK",
        DataUtils.ERROR_TRANSACTION_ILLEGAL_STATE);
    assertThat(rolledBack.getErrorCode()).isEqualTo(50000);
    assertThat(rolledBack.getMessage()).contains("has status ROLLED_BACK, not OPEN");
    assertThat(H2Errors.isBrokenConnection(rolledBack)).isTrue();
    assertThat(Handover.isHandover(rolledBack)).isTrue();
    assertThat(H2Errors.isBrokenConnection(transactionNot("CLOSED",
        DataUtils.ERROR_TRANSACTION_ILLEGAL_STATE))).isTrue();
  }

  /**
   * H2's own errors for a statement the closing database ended: one it canceled (57014), and one
   * that ended after the serving process's {@code SHUTDOWN} marked its session for closing
   * (90135, {@code SessionLocal.checkSuspended}).
   */
  @ParameterizedTest
  @ValueSource(ints = {57014, 90135})
  void aStatementTheClosingDatabaseEndedIsAHandover(int errorCode) {
    SQLException ended = DbException.get(errorCode).getSQLException();
    assertThat(ended.getErrorCode()).isEqualTo(errorCode);
    assertThat(H2Errors.isBrokenConnection(ended)).as(ended.getMessage()).isTrue();
    assertThat(Handover.isHandover(ended)).as(ended.getMessage()).isTrue();
  }

  /**
   * A statement whose session the closing database closed under it, as a process that connected
   * just as the serving one closed saw it (InboxCrashTest): H2's server sends the
   * {@code NullPointerException} on the cleared user as a general error's text.
   */
  @Test
  void aStatementWhoseSessionTheClosingDatabaseClosedIsAHandover() {
    SQLException closedUnder = DbException.convert(new NullPointerException("Cannot invoke "
        + "\"org.h2.engine.User.checkTableRight(org.h2.table.Table, int)\" because the return "
        + "value of \"org.h2.engine.SessionLocal.getUser()\" is null")).getSQLException();
    assertThat(closedUnder.getErrorCode()).isEqualTo(50000);
    assertThat(Handover.isHandover(closedUnder)).as(closedUnder.getMessage()).isTrue();
    SQLException elsewhere = DbException.convert(new NullPointerException("Cannot invoke "
        + "\"Object.toString()\" because \"value\" is null")).getSQLException();
    assertThat(Handover.isHandover(elsewhere)).as(elsewhere.getMessage()).isFalse();
  }

  /**
   * H2's client after the serving process answered that it closed the session: the next broken
   * write finds the session's connection list gone ({@code SessionRemote.removeServer}, seen in
   * {@code StorageErrorsTest} when the server left during back-to-back accepts).
   */
  @Test
  void theClientsOwnClosedSessionIsAHandover() {
    NullPointerException inClient = new NullPointerException(
        "Cannot invoke \"java.util.ArrayList.remove(int)\" because \"this.transferList\" is null");
    inClient.setStackTrace(new StackTraceElement[] {
        new StackTraceElement("org.h2.engine.SessionRemote", "removeServer",
            "SessionRemote.java", 481),
        new StackTraceElement("org.h2.engine.SessionRemote", "setSavepoint",
            "SessionRemote.java", 300)});
    SQLException closed = DbException.convert(inClient).getSQLException();
    assertThat(closed.getErrorCode()).isEqualTo(50000);
    assertThat(H2Errors.isBrokenConnection(closed)).isTrue();
    assertThat(Handover.isHandover(closed)).isTrue();

    NullPointerException elsewhere = new NullPointerException("in the engine");
    elsewhere.setStackTrace(new StackTraceElement[] {
        new StackTraceElement("org.h2.command.Command", "executeUpdate", "Command.java", 1),
        new StackTraceElement("org.h2.engine.SessionRemote", "setSavepoint",
            "SessionRemote.java", 300)});
    assertThat(H2Errors.isBrokenConnection(DbException.convert(elsewhere).getSQLException()))
        .as("a NullPointerException thrown elsewhere in H2 is a bug to report, not a handover")
        .isFalse();
  }

  @Test
  void otherGeneralErrorsAreNot() {
    // a committed transaction, or the same words under another storage error, are not a handover
    assertThat(H2Errors.isBrokenConnection(transactionNot("COMMITTED",
        DataUtils.ERROR_TRANSACTION_ILLEGAL_STATE))).isFalse();
    assertThat(H2Errors.isBrokenConnection(transactionNot("ROLLED_BACK",
        DataUtils.ERROR_TRANSACTION_CORRUPT))).isFalse();
    SQLException general = DbException.convert(new IllegalStateException("boom"))
        .getSQLException();
    assertThat(general.getErrorCode()).isEqualTo(50000);
    assertThat(H2Errors.isBrokenConnection(general)).isFalse();
    assertThat(Handover.isHandover(general)).isFalse();
  }
}
