package io.github.resilienthttp.callbacks;

/**
 * No signature in the delivery matches the body under any of the receiver's secrets: the delivery is
 * forged, was altered on the way (a proxy re-encoding the JSON is a common cause), or was signed with a
 * secret the receiver does not have (yet). The message says how many signatures and secrets were
 * compared, never their values.
 */
public final class SignatureMismatchException extends CallbackVerificationException {
  private static final long serialVersionUID = 1L;

  /** Signatures of a supported version compared. */
  private final int signaturesChecked;

  /**
   * For {@link SignatureScheme} implementations.
   *
   * @param scheme the scheme's name
   * @param signaturesChecked how many candidate signatures of a supported version were compared
   * @param secrets how many secrets each was compared under
   */
  public SignatureMismatchException(String scheme, int signaturesChecked, int secrets) {
    super(scheme, "no signature matches (" + signaturesChecked + " signature(s) of a supported version"
        + " compared under " + secrets + " secret(s))");
    this.signaturesChecked = signaturesChecked;
  }

  /** {@return how many signatures of a supported version the delivery carried} */
  public int signaturesChecked() {
    return signaturesChecked;
  }
}
