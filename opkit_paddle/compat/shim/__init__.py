"""The folder put first on sys.path in opkit's Paddle-compatibility mode (holds the `op_test`
module and the `paddle` facade); never import anything from here directly."""
