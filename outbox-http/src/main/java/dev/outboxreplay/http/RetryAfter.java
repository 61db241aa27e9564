package dev.outboxreplay.http;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a {@code Retry-After} header (RFC 9110 section 10.2.3): delta-seconds, or an HTTP-date in
 * any of the three forms of section 5.6.7 that recipients must accept: IMF-fixdate
 * ({@code Sun, 06 Nov 1994 08:49:37 GMT}), the obsolete RFC 850 form
 * ({@code Sunday, 06-Nov-94 08:49:37 GMT}) and asctime ({@code Sun Nov  6 08:49:37 1994}).
 * A date in the past means "now"; a negative or unreadable value is ignored. Capping an absurdly
 * long wait is the retry policy's job ({@code RetryPolicy.Builder#maxRetryAfter}).
 */
public final class RetryAfter {
  private static final Pattern DELTA = Pattern.compile("\\d+");
  private static final List<String> MONTHS = List.of("jan", "feb", "mar", "apr", "may", "jun",
      "jul", "aug", "sep", "oct", "nov", "dec");
  private static final String TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
  private static final Pattern IMF_FIXDATE = Pattern.compile(
      "[A-Za-z]{3}, (\\d{2}) ([A-Za-z]{3}) (\\d{4}) " + TIME + " GMT");
  private static final Pattern RFC_850 = Pattern.compile(
      "[A-Za-z]{6,9}, (\\d{2})-([A-Za-z]{3})-(\\d{2}) " + TIME + " GMT");
  private static final Pattern ASCTIME = Pattern.compile(
      "[A-Za-z]{3} ([A-Za-z]{3}) +(\\d{1,2}) " + TIME + " (\\d{4})");

  private RetryAfter() {}

  /**
   * How long {@code header} asks to wait, measured from {@code now}.
   *
   * @return the wait ({@link Duration#ZERO} for a date in the past), or null when the header is
   *     absent, negative or not one of the forms above
   */
  public static Duration parse(String header, Instant now) {
    if (header == null) {
      return null;
    }
    String value = header.strip();
    if (DELTA.matcher(value).matches()) {
      return value.length() > 12 ? Duration.ofSeconds(999_999_999_999L)
          : Duration.ofSeconds(Long.parseLong(value));
    }
    Instant at = date(value, now);
    if (at == null) {
      return null;
    }
    Duration wait = Duration.between(now, at);
    return wait.isNegative() ? Duration.ZERO : wait;
  }

  private static Instant date(String value, Instant now) {
    try {
      Matcher m = IMF_FIXDATE.matcher(value);
      if (m.matches()) {
        return at(Integer.parseInt(m.group(3)), m.group(2), m.group(1), m, 4);
      }
      m = RFC_850.matcher(value);
      if (m.matches()) {
        return at(fullYear(Integer.parseInt(m.group(3)), now), m.group(2), m.group(1), m, 4);
      }
      m = ASCTIME.matcher(value);
      if (m.matches()) {
        return at(Integer.parseInt(m.group(6)), m.group(1), m.group(2), m, 3);
      }
    } catch (DateTimeException | IllegalArgumentException e) {
      return null; // a day or time out of range: not a date
    }
    return null;
  }

  private static Instant at(int year, String month, String day, Matcher time, int firstTimeGroup) {
    int monthIndex = MONTHS.indexOf(month.toLowerCase(Locale.ROOT));
    if (monthIndex < 0) {
      throw new IllegalArgumentException("not a month: " + month);
    }
    return LocalDateTime.of(year, monthIndex + 1, Integer.parseInt(day),
        Integer.parseInt(time.group(firstTimeGroup)),
        Integer.parseInt(time.group(firstTimeGroup + 1)),
        Integer.parseInt(time.group(firstTimeGroup + 2))).toInstant(ZoneOffset.UTC);
  }

  /**
   * RFC 9110: a two-digit year that would be more than 50 years in the future is the most recent
   * past year with the same last two digits.
   */
  private static int fullYear(int twoDigits, Instant now) {
    int thisYear = LocalDateTime.ofInstant(now, ZoneOffset.UTC).getYear();
    int year = thisYear - Math.floorMod(thisYear, 100) + twoDigits;
    return year > thisYear + 50 ? year - 100 : year;
  }
}
