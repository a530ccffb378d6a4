// Entry point of `ndr`, the command-line tool (commands are filled in later).
int main() { return 0; }
