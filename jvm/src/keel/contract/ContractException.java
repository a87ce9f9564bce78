package keel.contract;

/** A deliberate failure of a contract call: the transaction fails with this message and changes nothing. */
public class ContractException extends RuntimeException {
  public ContractException(String message) {
    super(message);
  }
}
