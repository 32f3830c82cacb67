#include "sloserve/remote/wire_tensors.h"

namespace sloserve::remote {

void ToWire(const TensorSet& set, WireTensors* out) {
  for (const Tensor& t : set) {
    worker::Tensor* w = out->Add();
    w->set_name(t.name);
    w->set_datatype(t.datatype);
    for (int64_t d : t.shape) w->add_shape(d);
    w->set_data(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  }
}

TensorSet FromWire(const WireTensors& in) {
  TensorSet set;
  set.reserve(in.size());
  for (const worker::Tensor& w : in) {
    Tensor t;
    t.name = w.name();
    t.datatype = w.datatype();
    t.shape.assign(w.shape().begin(), w.shape().end());
    t.data.assign(w.data().begin(), w.data().end());
    set.push_back(std::move(t));
  }
  return set;
}

}  // namespace sloserve::remote
