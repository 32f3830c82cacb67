#include "sloserve/server/infer_request_parser.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/echo_name.h"
#include "sloserve/server/infer_request_checks.h"
#include "sloserve/server/json_limits.h"
#include "sloserve/server/tensor_codec.h"
#include "sloserve/server/unknown_parameters.h"

namespace sloserve {
namespace {

using json = nlohmann::json;

// One member the validation looks at: its JSON kind and, for a scalar, its value
// (a container's contents are read by its own frame, or skipped).
struct SaxField {
  enum Kind : uint8_t { kAbsent, kNull, kBool, kInt, kUnsigned, kFloat, kString, kArray, kObject };
  Kind kind = kAbsent;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;

  bool present() const { return kind != kAbsent; }
  bool is_string() const { return kind == kString; }
  bool is_integer() const { return kind == kInt || kind == kUnsigned; }
  bool is_number() const { return is_integer() || kind == kFloat; }
  double as_double() const {
    return kind == kInt ? static_cast<double>(i) : kind == kUnsigned ? static_cast<double>(u) : d;
  }
};

// An input's `data` array converted as it was read.
struct SaxTensorData {
  bool converted = false;
  std::string datatype;  // the one it was converted as
  Status status;         // the first element's error
  int64_t count = 0;
  std::vector<uint8_t> bytes;
};

struct SaxInput {
  bool is_object = false;
  SaxField name, datatype, shape, parameters, binary_data_size, data;
  std::vector<int64_t> dims;  // `shape`, when an array
  bool dims_bad = false;      // an element that is not a non-negative integer
  int data_id = -1;           // the how-manieth input `data` array of the document
  SaxTensorData converted;
};

struct SaxOutput {
  bool is_object = false;
  SaxField name, parameters, binary_data;
};

// Everything the validation needs from the document.
struct SaxDocument {
  bool is_object = false;
  SaxField id, inputs, parameters, slo_ms, app, priority, binary_data_output, outputs;
  std::vector<std::string> unknown_parameters;  // keys of "parameters" sloserve does not read
  int64_t input_count = 0;
  Status inputs_error;            // the first input the tree's loop would refuse
  std::optional<SaxInput> input;  // the one accepted input
  Status outputs_error;
  std::vector<RequestedOutput> requested;
};

// What the next value is, from its parent container and key.
enum class Slot : uint8_t {
  kIgnored,
  kRoot,
  kId,
  kInputs,
  kInputsElement,
  kInputName,
  kInputDatatype,
  kInputShape,
  kShapeElement,
  kInputParameters,
  kBinaryDataSize,
  kInputData,
  kDataElement,
  kParameters,
  kSloMs,
  kApp,
  kPriority,
  kBinaryDataOutput,
  kOutputs,
  kOutputsElement,
  kOutputName,
  kOutputParameters,
  kOutputBinaryData,
};

// An open container and what reads its members.
enum class Frame : uint8_t {
  kSkipped,
  kDocument,
  kInputs,
  kInput,
  kShape,
  kInputParameters,
  kData,
  kParameters,
  kOutputs,
  kOutput,
  kOutputParameters,
};

class InferRequestSax {
 public:
  struct ForcedData {  // the second pass: convert this data array as this datatype
    int data_id = -1;
    std::string datatype;
    int64_t expected = 0;  // elements the shape needs (reserved)
  };

  InferRequestSax(const TaskInfo& task, size_t json_bytes, JsonLimits limits,
                  std::optional<ForcedData> forced = std::nullopt)
      : task_(task), json_bytes_(json_bytes), limits_(limits), forced_(std::move(forced)) {}

  SaxDocument& document() { return doc_; }
  const Status& limit_error() const { return limit_error_; }
  SaxTensorData& forced_result() { return forced_result_; }

  // nlohmann::json_sax interface.
  bool null() {
    if (InData()) return DataScalar(nullptr);
    return Scalar(SaxField{SaxField::kNull});
  }
  bool boolean(bool v) {
    if (InData()) return DataScalar(v);
    SaxField f{SaxField::kBool};
    f.b = v;
    return Scalar(std::move(f));
  }
  bool number_integer(int64_t v) {
    if (InData()) return DataScalar(v);
    SaxField f{SaxField::kInt};
    f.i = v;
    return Scalar(std::move(f));
  }
  bool number_unsigned(uint64_t v) {
    if (InData()) return DataScalar(v);
    SaxField f{SaxField::kUnsigned};
    f.u = v;
    return Scalar(std::move(f));
  }
  bool number_float(double v, const std::string& /*text*/) {
    if (InData()) return DataScalar(v);
    SaxField f{SaxField::kFloat};
    f.d = v;
    return Scalar(std::move(f));
  }
  bool string(std::string& v) {
    if (v.size() > limits_.max_string_bytes) return Limit(JsonStringTooLong(limits_));
    if (InData()) return DataScalar(std::move(v));
    SaxField f{SaxField::kString};
    f.s = std::move(v);
    return Scalar(std::move(f));
  }
  bool binary(json::binary_t& /*v*/) { return true; }  // not produced by JSON text
  bool start_object(size_t /*elements*/) { return Open(SaxField::kObject); }
  bool start_array(size_t /*elements*/) { return Open(SaxField::kArray); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    if (k.size() > limits_.max_string_bytes) return Limit(JsonStringTooLong(limits_));
    if (!CountValue()) return false;
    key_slot_ = SlotOfKey(stack_.back().frame, k);
    if (stack_.back().frame == Frame::kParameters && key_slot_ == Slot::kIgnored &&
        doc_.unknown_parameters.size() < kMaxParameterWarnings) {
      doc_.unknown_parameters.push_back(k);
    }
    return true;
  }
  bool parse_error(size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*ex*/) {
    return false;
  }

 private:
  struct Open_ {
    Frame frame;
    int data_depth = 0;  // kData: nesting level of this array (the outermost is 1)
  };

  // A scalar of a `data` array (the bulk of a body): straight to the tensor's writer.
  bool InData() const { return !stack_.empty() && stack_.back().frame == Frame::kData; }
  bool DataScalar(json v) {
    if (!CountValue()) return false;
    if (writer_ && data_status_.ok()) data_status_ = writer_->Append(v);
    return true;
  }

  bool Limit(Status s) {
    limit_error_ = std::move(s);
    return false;
  }
  bool CountValue() {
    if (++values_ > limits_.max_values) return Limit(JsonTooManyValues(limits_));
    return true;
  }

  static Slot SlotOfKey(Frame frame, const std::string& k) {
    switch (frame) {
      case Frame::kDocument:
        return k == "id"           ? Slot::kId
               : k == "inputs"     ? Slot::kInputs
               : k == "parameters" ? Slot::kParameters
               : k == "outputs"    ? Slot::kOutputs
                                   : Slot::kIgnored;
      case Frame::kInput:
        return k == "name"         ? Slot::kInputName
               : k == "datatype"   ? Slot::kInputDatatype
               : k == "shape"      ? Slot::kInputShape
               : k == "parameters" ? Slot::kInputParameters
               : k == "data"       ? Slot::kInputData
                                   : Slot::kIgnored;
      case Frame::kInputParameters:
        return k == "binary_data_size" ? Slot::kBinaryDataSize : Slot::kIgnored;
      case Frame::kParameters:
        return k == "slo_ms"               ? Slot::kSloMs
               : k == "app"                ? Slot::kApp
               : k == "priority"           ? Slot::kPriority
               : k == "binary_data_output" ? Slot::kBinaryDataOutput
                                           : Slot::kIgnored;
      case Frame::kOutput:
        return k == "name"         ? Slot::kOutputName
               : k == "parameters" ? Slot::kOutputParameters
                                   : Slot::kIgnored;
      case Frame::kOutputParameters:
        return k == "binary_data" ? Slot::kOutputBinaryData : Slot::kIgnored;
      default:
        return Slot::kIgnored;
    }
  }

  // The slot of the value about to be read.
  Slot NextSlot() const {
    if (stack_.empty()) return Slot::kRoot;
    switch (stack_.back().frame) {
      case Frame::kDocument:
      case Frame::kInput:
      case Frame::kInputParameters:
      case Frame::kParameters:
      case Frame::kOutput:
      case Frame::kOutputParameters:
        return key_slot_;
      case Frame::kInputs:
        return Slot::kInputsElement;
      case Frame::kShape:
        return Slot::kShapeElement;
      case Frame::kData:
        return Slot::kDataElement;
      case Frame::kOutputs:
        return Slot::kOutputsElement;
      case Frame::kSkipped:
        break;
    }
    return Slot::kIgnored;
  }

  // Whether the input being read would be the accepted one (no earlier one was, and
  // none was refused), so its data is worth converting.
  bool InputIsCandidate() const { return doc_.inputs_error.ok() && !doc_.input.has_value(); }

  // Assigns a member (a repeated key replaces the earlier value, as in a tree).
  bool Assign(Slot slot, SaxField f) {
    switch (slot) {
      case Slot::kId:
        doc_.id = std::move(f);
        break;
      case Slot::kInputs:
        doc_.inputs = std::move(f);
        doc_.input_count = 0;
        doc_.inputs_error = OkStatus();
        doc_.input.reset();
        break;
      case Slot::kInputName:
        input_.name = std::move(f);
        break;
      case Slot::kInputDatatype:
        input_.datatype = std::move(f);
        break;
      case Slot::kInputShape:
        input_.shape = std::move(f);
        input_.dims.clear();
        input_.dims_bad = false;
        break;
      case Slot::kInputParameters:
        input_.parameters = std::move(f);
        input_.binary_data_size = SaxField{};
        break;
      case Slot::kBinaryDataSize:
        input_.binary_data_size = std::move(f);
        break;
      case Slot::kInputData:
        input_.data = std::move(f);
        input_.data_id = -1;
        input_.converted = SaxTensorData{};
        break;
      case Slot::kParameters:
        doc_.parameters = std::move(f);
        doc_.slo_ms = doc_.app = doc_.priority = doc_.binary_data_output = SaxField{};
        doc_.unknown_parameters.clear();
        break;
      case Slot::kSloMs:
        doc_.slo_ms = std::move(f);
        break;
      case Slot::kApp:
        doc_.app = std::move(f);
        break;
      case Slot::kPriority:
        doc_.priority = std::move(f);
        break;
      case Slot::kBinaryDataOutput:
        doc_.binary_data_output = std::move(f);
        break;
      case Slot::kOutputs:
        doc_.outputs = std::move(f);
        doc_.outputs_error = OkStatus();
        doc_.requested.clear();
        break;
      case Slot::kOutputName:
        output_.name = std::move(f);
        break;
      case Slot::kOutputParameters:
        output_.parameters = std::move(f);
        output_.binary_data = SaxField{};
        break;
      case Slot::kOutputBinaryData:
        output_.binary_data = std::move(f);
        break;
      default:
        break;
    }
    return true;
  }

  bool Scalar(SaxField f) {
    if (!CountValue()) return false;
    const Slot slot = NextSlot();
    switch (slot) {
      case Slot::kRoot:
        return true;  // not an object: refused by the validation
      case Slot::kInputsElement:
        ++doc_.input_count;
        input_ = SaxInput{};
        EndInput();
        return true;
      case Slot::kOutputsElement:
        output_ = SaxOutput{};
        EndOutput();
        return true;
      case Slot::kShapeElement:
        AddDim(f);
        return true;
      default:
        return Assign(slot, std::move(f));
    }
  }

  bool Open(SaxField::Kind kind) {
    if (static_cast<int>(stack_.size()) + 1 > limits_.max_depth) {
      return Limit(JsonNestedTooDeeply(limits_));
    }
    if (!CountValue()) return false;
    const bool object = kind == SaxField::kObject;
    const Slot slot = NextSlot();
    Frame frame = Frame::kSkipped;
    int data_depth = 0;
    switch (slot) {
      case Slot::kRoot:
        doc_.is_object = object;
        frame = object ? Frame::kDocument : Frame::kSkipped;
        break;
      case Slot::kInputs:
        Assign(slot, SaxField{kind});
        frame = object ? Frame::kSkipped : Frame::kInputs;
        break;
      case Slot::kInputsElement:
        ++doc_.input_count;
        input_ = SaxInput{};
        input_.is_object = object;
        if (!object) EndInput();  // refused whatever it holds
        frame = object ? Frame::kInput : Frame::kSkipped;
        break;
      case Slot::kInputShape:
        Assign(slot, SaxField{kind});
        frame = object ? Frame::kSkipped : Frame::kShape;
        break;
      case Slot::kShapeElement:
        input_.dims_bad = true;
        break;
      case Slot::kInputParameters:
        Assign(slot, SaxField{kind});
        frame = object ? Frame::kInputParameters : Frame::kSkipped;
        break;
      case Slot::kInputData:
        Assign(slot, SaxField{kind});
        if (!object) {
          frame = Frame::kData;
          data_depth = 1;
          StartData();
        }
        break;
      case Slot::kDataElement:
        if (object) {
          // Not a scalar of any datatype: the tree's conversion refuses it here too.
          if (writer_ && data_status_.ok()) data_status_ = writer_->Append(json::object());
        } else {
          frame = Frame::kData;
          data_depth = stack_.back().data_depth + 1;
          if (writer_ && data_status_.ok() && data_depth > JsonTensorDataWriter::kMaxDepth) {
            data_status_ = JsonTensorDataWriter::NestedTooDeeply();
          }
        }
        break;
      case Slot::kParameters:
        Assign(slot, SaxField{kind});
        frame = object ? Frame::kParameters : Frame::kSkipped;
        break;
      case Slot::kOutputs:
        Assign(slot, SaxField{kind});
        frame = object ? Frame::kSkipped : Frame::kOutputs;
        break;
      case Slot::kOutputsElement:
        output_ = SaxOutput{};
        output_.is_object = object;
        if (!object) EndOutput();
        frame = object ? Frame::kOutput : Frame::kSkipped;
        break;
      case Slot::kOutputParameters:
        Assign(slot, SaxField{kind});
        frame = object ? Frame::kOutputParameters : Frame::kSkipped;
        break;
      default:
        Assign(slot, SaxField{kind});
        break;
    }
    stack_.push_back({frame, data_depth});
    return true;
  }

  bool Close() {
    const Open_ closed = stack_.back();
    stack_.pop_back();
    if (closed.frame == Frame::kInput) EndInput();
    if (closed.frame == Frame::kOutput) EndOutput();
    if (closed.frame == Frame::kData && closed.data_depth == 1) EndData();
    return true;
  }

  void AddDim(const SaxField& f) {
    const bool ok = (f.kind == SaxField::kInt && f.i >= 0) ||
                    (f.kind == SaxField::kUnsigned && static_cast<int64_t>(f.u) >= 0);
    if (!ok) {
      input_.dims_bad = true;
    } else if (InputIsCandidate()) {  // another input's shape is never looked at
      input_.dims.push_back(f.kind == SaxField::kInt ? f.i : static_cast<int64_t>(f.u));
    }
  }

  // An input `data` array begins: converted now when its datatype is known (the usual
  // member order) and this input may be the accepted one, else in the second pass.
  void StartData() {
    input_.data_id = next_data_id_++;
    const std::string* datatype = nullptr;
    if (forced_) {
      if (input_.data_id == forced_->data_id) datatype = &forced_->datatype;
    } else if (InputIsCandidate() && input_.datatype.is_string() &&
               (task_.input_datatype.empty() || input_.datatype.s == task_.input_datatype)) {
      datatype = &input_.datatype.s;
    }
    if (datatype == nullptr) return;
    SaxTensorData& out = forced_ ? forced_result_ : input_.converted;
    out = SaxTensorData{};
    out.converted = true;
    out.datatype = *datatype;
    // Reserved for the shape read so far, capped by what the JSON can hold (a scalar and
    // its comma take at least two bytes), so a huge shape with little data costs nothing.
    StatusOr<int64_t> expected = forced_ ? forced_->expected : int64_t{0};
    if (!forced_ && !input_.dims_bad && !input_.dims.empty()) {
      expected = ElementCount(input_.dims, "input shape");
    }
    if (expected.ok()) {
      const auto cap = static_cast<int64_t>(json_bytes_ / 2 + 1);
      out.bytes.reserve(static_cast<size_t>(std::min(*expected, cap)) * DatatypeSize(*datatype));
    }
    writer_.emplace(*datatype, out.bytes);
    data_status_ = OkStatus();
  }

  void EndData() {
    if (!writer_) return;
    SaxTensorData& out = forced_ ? forced_result_ : input_.converted;
    out.status = std::move(data_status_);
    out.count = writer_->count();
    writer_.reset();
  }

  // One element of `inputs` is complete: the tree parser's loop over them.
  void EndInput() {
    if (!doc_.inputs_error.ok()) return;
    if (!input_.is_object || !input_.name.is_string()) {
      doc_.inputs_error = InvalidArgumentError("each input must be an object with a string 'name'");
    } else if (input_.name.s != task_.input_name) {
      doc_.inputs_error =
          InvalidArgumentError("unknown input '" + EchoName(input_.name.s) + "' for model '" +
                               task_.name + "' (expects '" + task_.input_name + "')");
    } else if (doc_.input.has_value()) {
      doc_.inputs_error = InvalidArgumentError("input '" + task_.input_name + "' repeated");
    } else {
      doc_.input = std::move(input_);
    }
    if (!doc_.inputs_error.ok()) doc_.input.reset();  // its tensor is not needed
    input_ = SaxInput{};
  }

  // One element of `outputs` is complete: the tree parser's loop over them.
  void EndOutput() {
    if (!doc_.outputs_error.ok()) return;
    const SaxOutput& o = output_;
    if (!o.is_object || !o.name.is_string()) {
      doc_.outputs_error =
          InvalidArgumentError("each requested output must be an object with a string 'name'");
      return;
    }
    const std::string& n = o.name.s;
    if (n != task_.output_name) {
      doc_.outputs_error = InvalidArgumentError("unknown output '" + EchoName(n) + "' for model '" +
                                                task_.name + "' (has '" + task_.output_name + "')");
      return;
    }
    for (const RequestedOutput& seen : doc_.requested) {
      if (seen.name == n) {
        doc_.outputs_error = InvalidArgumentError("output '" + n + "' requested twice");
        return;
      }
    }
    if (o.parameters.present() && o.parameters.kind != SaxField::kObject) {
      doc_.outputs_error = InvalidArgumentError("output 'parameters' must be an object");
      return;
    }
    if (o.binary_data.present() && o.binary_data.kind != SaxField::kBool) {
      doc_.outputs_error = InvalidArgumentError("parameter 'binary_data' must be a boolean");
      return;
    }
    doc_.requested.push_back({n, o.binary_data.b});
  }

  const TaskInfo& task_;
  const size_t json_bytes_;
  const JsonLimits limits_;
  const std::optional<ForcedData> forced_;
  SaxDocument doc_;
  SaxInput input_;    // the element of `inputs` being read
  SaxOutput output_;  // the element of `outputs` being read
  std::vector<Open_> stack_;
  Slot key_slot_ = Slot::kIgnored;
  int64_t values_ = 0;
  int next_data_id_ = 0;
  std::optional<JsonTensorDataWriter> writer_;  // while a converted `data` array is read
  Status data_status_;
  SaxTensorData forced_result_;
  Status limit_error_;
};

// Runs the handler over the body's JSON part; the error is the parse's (limit or syntax).
Status RunSax(const InferBodyParts& parts, InferRequestSax& sax) {
  if (json::sax_parse(parts.json, &sax)) return OkStatus();
  if (!sax.limit_error().ok()) {
    return InvalidArgumentError("request body: " + std::string(sax.limit_error().message()));
  }
  return MalformedJson(parts);
}

// The input's elements: its JSON `data` (converted in the pass, or now in a second one)
// or `binary_data_size` bytes of `binary`. The tree parser's ParseInputData, in order.
Status ReadInputElements(const TaskInfo& task, std::string_view json_part, SaxInput& in,
                         const std::string& dt, int64_t expected, const std::vector<int64_t>& shape,
                         std::string_view& binary, std::vector<uint8_t>& out) {
  if (in.parameters.present() && in.parameters.kind != SaxField::kObject) {
    return InvalidArgumentError("input 'parameters' must be an object");
  }
  if (in.binary_data_size.present()) {
    if (in.binary_data_size.kind != SaxField::kUnsigned) {
      return InvalidArgumentError(
          "input parameter 'binary_data_size' must be an integer from 0 to 2^64-1");
    }
    if (in.data.present()) {
      return InvalidArgumentError("input has both 'data' and parameter 'binary_data_size'");
    }
    return TakeBinaryTensorData(binary, in.binary_data_size.u, dt, expected, out);
  }
  if (in.data.kind != SaxField::kArray) {
    return InvalidArgumentError(
        "input 'data' must be an array (or binary data: parameter 'binary_data_size')");
  }
  SaxTensorData* data = &in.converted;
  InferRequestSax second(task, json_part.size(), JsonLimits{},
                         InferRequestSax::ForcedData{in.data_id, dt, expected});
  if (!data->converted || data->datatype != dt) {
    in.converted = SaxTensorData{};  // converted as a datatype given again later: redone
    RETURN_IF_ERROR(RunSax(InferBodyParts{json_part, {}, false}, second));
    data = &second.forced_result();
  }
  RETURN_IF_ERROR(data->status);
  if (data->count != expected) {
    return InvalidArgumentError("input 'data' has " + std::to_string(data->count) +
                                " elements but shape " + ShapeString(shape) + " needs " +
                                std::to_string(expected));
  }
  out = std::move(data->bytes);
  return OkStatus();
}

// The request's parameters: the tree parser's ParseParameters and the
// binary_data_output part of its ParseOutputs, in order.
Status ReadParameters(const SaxDocument& doc, const TaskInfo& task, Duration max_slo,
                      InferCall& call) {
  InferRequest& req = call.request;
  req.slo = DefaultSlo(task, max_slo);
  if (!doc.parameters.present()) return OkStatus();
  if (doc.parameters.kind != SaxField::kObject) {
    return InvalidArgumentError("'parameters' must be an object");
  }
  if (doc.slo_ms.present()) {
    if (!doc.slo_ms.is_number()) return InvalidArgumentError("parameter 'slo_ms' must be a number");
    ASSIGN_OR_RETURN(req.slo, SloFromMillis(doc.slo_ms.as_double(), task, max_slo));
  }
  if (doc.app.present()) {
    if (!doc.app.is_string()) return InvalidArgumentError("parameter 'app' must be a string");
    req.app = doc.app.s;
    if (!req.app.empty() && !task.apps.empty() &&
        std::find(task.apps.begin(), task.apps.end(), req.app) == task.apps.end()) {
      return InvalidArgumentError("unknown app '" + EchoName(req.app) + "' for model '" +
                                  task.name + "'");
    }
  }
  if (doc.priority.present()) {
    if (!doc.priority.is_integer()) {
      return InvalidArgumentError("parameter 'priority' must be an integer");
    }
    const int64_t p = doc.priority.kind == SaxField::kUnsigned
                          ? static_cast<int64_t>(std::min<uint64_t>(doc.priority.u, INT64_MAX))
                          : doc.priority.i;
    RETURN_IF_ERROR(CheckPriority(p, task));
    req.priority = static_cast<int32_t>(p);
  }
  return OkStatus();
}

// The tree parser's ParseInferDocument over what the pass kept.
StatusOr<InferCall> ValidateDocument(const TaskInfo& task, SaxDocument& doc, Duration max_slo,
                                     std::string_view json_part, std::string_view binary) {
  if (!doc.is_object) return InvalidArgumentError("request body must be a JSON object");
  InferCall call;
  call.request.task = task.name;
  if (doc.id.present()) {
    if (!doc.id.is_string()) return InvalidArgumentError("'id' must be a string");
    call.id = std::move(doc.id.s);
    call.has_id = true;
  }
  if (doc.inputs.kind != SaxField::kArray || doc.input_count == 0) {
    return InvalidArgumentError("'inputs' must be a non-empty array");
  }
  RETURN_IF_ERROR(doc.inputs_error);
  SaxInput& in = *doc.input;
  if (!in.datatype.is_string()) return InvalidArgumentError("input 'datatype' must be a string");
  const std::string& dt = in.datatype.s;
  if (!task.input_datatype.empty() && dt != task.input_datatype) {
    return InvalidArgumentError("input datatype '" + EchoName(dt) +
                                "' does not match the declared '" + task.input_datatype + "'");
  }
  if (!in.shape.present()) return InvalidArgumentError("input 'shape' is missing");
  if (in.shape.kind != SaxField::kArray) {
    return InvalidArgumentError("input 'shape' must be an array of integers");
  }
  if (in.dims_bad) return InvalidArgumentError("input 'shape' must hold integers from 0 to 2^63-1");
  RETURN_IF_ERROR(CheckShape(in.dims, task));
  ASSIGN_OR_RETURN(const int64_t expected, ElementCount(in.dims, "input shape"));
  Tensor tensor;
  RETURN_IF_ERROR(
      ReadInputElements(task, json_part, in, dt, expected, in.dims, binary, tensor.data));
  if (!binary.empty()) {
    return InvalidArgumentError(std::to_string(binary.size()) +
                                " bytes of binary data are not claimed by any input's "
                                "'binary_data_size'");
  }
  call.request.rows = static_cast<int32_t>(in.dims[0]);
  RETURN_IF_ERROR(ReadParameters(doc, task, max_slo, call));
  // In key order, once each, as the tree parser reports them.
  std::sort(doc.unknown_parameters.begin(), doc.unknown_parameters.end());
  doc.unknown_parameters.erase(
      std::unique(doc.unknown_parameters.begin(), doc.unknown_parameters.end()),
      doc.unknown_parameters.end());
  for (const std::string& k : doc.unknown_parameters)
    call.warnings.push_back(UnknownParameterWarning(k));
  if (doc.binary_data_output.present()) {
    if (doc.binary_data_output.kind != SaxField::kBool) {
      return InvalidArgumentError("parameter 'binary_data_output' must be a boolean");
    }
    call.binary_outputs = doc.binary_data_output.b;
  }
  if (doc.outputs.present()) {
    if (doc.outputs.kind != SaxField::kArray)
      return InvalidArgumentError("'outputs' must be an array");
    RETURN_IF_ERROR(doc.outputs_error);
    call.outputs = std::move(doc.requested);
  }
  tensor.name = task.input_name;
  tensor.datatype = dt;
  tensor.shape = std::move(in.dims);
  call.request.inputs.push_back(std::move(tensor));
  return call;
}

}  // namespace

StatusOr<InferCall> ParseInferRequestStreaming(const TaskInfo& task, std::string_view body,
                                               Duration max_slo, std::string_view json_length) {
  ASSIGN_OR_RETURN(const InferBodyParts parts, SplitInferBody(body, json_length));
  InferRequestSax sax(task, parts.json.size(), JsonLimits{});
  RETURN_IF_ERROR(RunSax(parts, sax));
  return ValidateDocument(task, sax.document(), max_slo, parts.json, parts.binary);
}

}  // namespace sloserve
