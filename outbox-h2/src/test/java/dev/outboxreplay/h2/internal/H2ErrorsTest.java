package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.h2.message.DbException;
import org.h2.mvstore.DataUtils;
import org.junit.jupiter.api.Test;

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

  @Test
  void aStatementTheClosingDatabaseCanceledIsAHandover() {
    SQLException canceled = DbException.get(org.h2.api.ErrorCode.STATEMENT_WAS_CANCELED)
        .getSQLException();
    assertThat(canceled.getErrorCode()).isEqualTo(57014);
    assertThat(Handover.isHandover(canceled)).isTrue();
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
