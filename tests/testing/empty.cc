// Keeps tidemark_testing a real library before it has sources of its own.
