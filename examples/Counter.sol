pragma solidity ^0.8.0;
contract Counter {
  event Added(address indexed by, uint256 amount, string note);
  uint256 private total;
  constructor(uint256 start) { total = start; }
  function add(uint256 amount, string calldata note) external { total += amount; emit Added(msg.sender, amount, note); }
  function get() external view returns (uint256) { return total; }
}
