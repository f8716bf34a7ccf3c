//! DeltaFIFO (client-go tools/cache/delta_fifo.go).
