from denpex.cli import console

console()
