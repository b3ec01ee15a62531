"""The BugFix world: the tiny language and its interpreter, the tasks, the tool environment, the tokenizer,
the task families and the substrates. No torch."""
