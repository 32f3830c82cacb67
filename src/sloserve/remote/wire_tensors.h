#pragma once
// core/payload_store.h's tensors <-> the worker protocol's wire tensors.
#include <google/protobuf/repeated_ptr_field.h>

#include "sloserve/core/payload_store.h"
#include "sloserve/proto/worker_service.pb.h"

namespace sloserve::remote {

using WireTensors = google::protobuf::RepeatedPtrField<worker::Tensor>;

void ToWire(const TensorSet& set, WireTensors* out);
TensorSet FromWire(const WireTensors& in);

}  // namespace sloserve::remote
