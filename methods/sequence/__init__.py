"""Set methods on one LSTM network: CF-RNN, MQ-RNN, DP-RNN (and PA-LSTM in methods/pa)."""
