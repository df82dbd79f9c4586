from trainwright_lint.cli import console

console()
