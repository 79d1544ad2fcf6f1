#include "store/pack_writer.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "util/coding.h"

namespace strata {

namespace {
std::string TempName() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rng() % 1000000) +
         ".tmp";
}
}  // namespace

Result<std::unique_ptr<PackWriter>> PackWriter::Create(Env* env, const std::string& tmp_dir) {
  std::string path = tmp_dir + "/" + TempName();
  STRATA_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(path));
  std::unique_ptr<PackWriter> w(new PackWriter(env, path, std::move(file)));
  STRATA_RETURN_IF_ERROR(w->Write(EncodePackHeader()));
  return w;
}

PackWriter::PackWriter(Env* env, std::string tmp_path, std::unique_ptr<WritableFile> file)
    : env_(env), tmp_path_(std::move(tmp_path)), file_(std::move(file)) {}

PackWriter::~PackWriter() {
  if (!finished_) {
    file_->Close();
    env_->RemoveFile(tmp_path_);  // best effort; Store::Open removes leftovers too
  }
}

Status PackWriter::Write(std::string_view data) {
  STRATA_RETURN_IF_ERROR(file_->Append(data));
  checksum_.Update(data);
  size_ += data.size();
  return Status::Ok();
}

Status PackWriter::Add(const Hash& id, ObjectType type, Codec codec, std::string_view stored, uint64_t raw_len) {
  PackEntry e{id, type, codec, size_, stored.size(), raw_len};
  STRATA_RETURN_IF_ERROR(Write(stored));
  entries_.push_back(e);
  return Status::Ok();
}

Result<SealedPack> PackWriter::Finish() {
  const uint64_t footer_offset = size_;
  std::string footer = EncodePackFooter(entries_);
  std::string trailer;
  PutFixed64(&trailer, footer_offset);
  PutFixed64(&trailer, footer.size());
  trailer.append(kPackMagic, sizeof(kPackMagic));
  STRATA_RETURN_IF_ERROR(Write(footer));
  STRATA_RETURN_IF_ERROR(Write(trailer));
  Hash sum = checksum_.Finish();
  STRATA_RETURN_IF_ERROR(file_->Append(std::string_view(reinterpret_cast<const char*>(sum.bytes.data()), Hash::kSize)));
  size_ += Hash::kSize;
  STRATA_RETURN_IF_ERROR(file_->Sync());
  STRATA_RETURN_IF_ERROR(file_->Close());

  SealedPack sealed;
  sealed.local_path = tmp_path_;
  sealed.name = sum.ToHex() + kPackSuffix;
  sealed.size = size_;
  sealed.entries = std::move(entries_);
  finished_ = true;  // the file now belongs to whoever publishes it
  return sealed;
}

}  // namespace strata
