// The one part of synthetic-model writing that touches the file system.

#include "harness/gguf/gguf_io.h"
#include "harness/gguf/synth.h"

namespace kvbench::gguf {

void write_synthetic_model(const std::filesystem::path& path, const ModelShape& shape,
                           GgmlType weight_type, std::uint64_t seed) {
  const GgufFile file = synthetic_model(shape, weight_type);
  const std::uint32_t align = alignment(file);
  AtomicFileWriter out(path);
  out.write(serialize_header(file));
  for (const TensorInfo& tensor : file.tensors) {
    synthesize_tensor_data(tensor, seed,
                           [&out](std::span<const std::uint8_t> bytes) { out.write(bytes); });
    out.write_zeros(pad_to(out.size(), align) - out.size());
  }
  out.commit();
}

}  // namespace kvbench::gguf
