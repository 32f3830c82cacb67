#pragma once
// Options that several policies take with one meaning, declared once so that every
// policy reading them agrees on type, default and range (`sloserve policies --describe`,
// `sloserve config schema`). An option only one policy takes is declared next to that
// policy's factory.
#include "sloserve/core/declared_key.h"

namespace sloserve {

// fixed, ribbon, kairos, drs, clkwrk, vpa_plus.
inline const KeyDecl kVariantOption{
    .name = "variant",
    .type = KeyType::kString,
    .help =
        "variant served, by name (fixed: comma-separated, at most one per task); default: "
        "the task's most accurate (required by vpa_plus)"};

// jellyfish_plus, model_switching, ramsis.
inline const KeyDecl kVariantsOption{
    .name = "variants",
    .type = KeyType::kString,
    .help = "comma-separated variant names to choose among; default: every variant of the task"};

// ramsis, slo_partition.
inline const KeyDecl kSloWorkersOption{
    .name = "slo_workers",
    .type = KeyType::kString,
    .help =
        "SLO classes as slo_ms:workers,... over the workers in order (required by "
        "slo_partition); default: one SLO class"};

// model_aware and the cluster placements.
inline const KeyDecl kWarmVariantOption{
    .name = "warm_variant",
    .type = KeyType::kString,
    .help =
        "the model of every query (one variant name; the thesis' placements also take one "
        "per task, comma-separated); default: any variant of the query's task"};

// kairos, drs.
inline const KeyDecl kKairosWindowOption{.name = "kairos_window",
                                         .type = KeyType::kInteger,
                                         .default_value = "100",
                                         .unit = "queries",
                                         .min = 1,
                                         .max = 100000,
                                         .help = "pending queries scanned per decision"};

// jellyfish_plus, model_switching, ramsis. Bounded (a day) before MillisF: 1e300 ms
// overflowed the microsecond Duration (issue 37).
inline const KeyDecl kWindowMsOption{.name = "window_ms",
                                     .type = KeyType::kNumber,
                                     .default_value = "500",
                                     .unit = "ms",
                                     .min = 0,
                                     .max = 86'400'000,
                                     .min_exclusive = true,
                                     .help = "width of the arrival-rate window"};

// jellyfish_plus, model_switching, ramsis.
inline const KeyDecl kQuantileOption{
    .name = "quantile",
    .type = KeyType::kNumber,
    .default_value = "0.95",
    .min = 0,
    .max = 1,
    .min_exclusive = true,
    .help = "latency quantile of the profile held against the SLO"};

}  // namespace sloserve
