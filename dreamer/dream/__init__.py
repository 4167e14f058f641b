"""The dream cycle: gathering, synthesis, guards, pointers, insights, seed migration."""
