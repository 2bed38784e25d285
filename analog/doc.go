// Package analog emulates kernel approximation on an analog in-memory
// computing (AIMC) accelerator of phase-change memory (PCM) crossbars, after
// "Kernel Approximation using Analog In-Memory Computing" (the analog
// paper): the projection Wx of a random feature map runs on emulated
// crossbars, everything after it stays digital.
//
// The emulated chip (Methods, "Evaluation Platform"; Eq. 2 mapping):
//
//   - The projection W (m×d) is stored transposed, inputs along crossbar
//     rows and features along columns, cut into 256×256 tiles; partial sums
//     of the tiles along the input dimension are added digitally.
//   - Inputs are quantised to INT8 with a fixed per-tile scale: a high
//     quantile (0.999 by default, Config.InputQuantile) of the calibration
//     inputs' magnitudes on the tile's rows; larger inputs saturate.
//   - Each weight is a differential pair of PCM conductances G⁺ − G⁻ (one
//     device per sign; the HERMES chip uses two per sign). Each column has
//     its own conductance scale, chosen from calibration inputs so that the
//     largest column current stays within the ADC range (step 3 of the
//     paper's deployment), and at most g_max = 25 µS.
//   - Programming noise, drift and read noise follow the PCM statistical
//     model published with IBM's aihwkit (Nandakumar et al. 2019; Joshi et
//     al. 2020): programming noise N(0, σ_p²) with σ_p = (0.26348 +
//     1.9650·ĝ − 1.1731·ĝ²)·g_max/25 µS, ĝ = g/g_max; drift g·(t/t₀)^(−ν)
//     with t₀ = 20 s and ν = |N(μ_ν, σ_ν²)|, μ_ν = clip(−0.0155 ln ĝ +
//     0.0244, 0.049, 0.1), σ_ν = clip(−0.0125 ln ĝ − 0.0059, 0.008, 0.045);
//     accumulated 1/f read noise with relative standard deviation
//     q_s·√ln((t + t_r)/(2t_r)), q_s = min(0.0088/max(ĝ^0.65, 10⁻³), 0.2),
//     t_r = 250 ns, at t = t_inference + t₀. Conductances are clipped at 0.
//   - Column currents are digitised by ADCs of a given resolution over
//     ±full scale (saturating), with optional Gaussian output noise.
//   - A digital affine correction (per-column scale and offset, fitted by
//     least squares on the calibration inputs against the exact projection)
//     compensates drift and the analog gain, as the chip's local digital
//     units do.
//
// Every source is switchable and seeded. With every noise source off (and
// ADC quantisation off) the emulation equals the digital projection of
// INT8-rounded inputs.
//
// Cost is the paper's Supplementary Note 4 (Table VIII) model: 2·L·d·m
// operations at 63.1 TOPS and 9.76 TOPS/W (about 6.5 W) for the AIMC chip,
// 624 TOPS INT8 or 312 TOPS FP16 at 400 W for the GPU (NVIDIA A100) and
// 1.2288 TOPS at 253 W for the CPU.
package analog
