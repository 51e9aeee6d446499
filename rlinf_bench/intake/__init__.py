"""Event intake: storage events -> complete checkpoints -> one Step Functions execution each."""
