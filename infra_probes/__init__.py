"""What runs inside probe Jobs: gpu, nccl, storage, checkpoint_io, throughput."""
