"""The optional GPU stage: `bench` compiles, verifies and times submissions on a CUDA GPU (its sandboxed side
is `worker`, its protocol `timing`), `inspection` shows what the compiler makes of a kernel without a GPU,
`leaderboard` ranks the results; `transfer` moves tensors between devices as views of whole storages."""
