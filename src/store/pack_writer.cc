#include "store/pack_writer.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "store/store_cipher.h"
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

Result<std::unique_ptr<PackWriter>> PackWriter::Create(Env* env, const std::string& tmp_dir, uint32_t version,
                                                        const StoreCipher* cipher) {
  std::string path = tmp_dir + "/" + TempName();
  STRATA_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(path));
  std::unique_ptr<PackWriter> w(new PackWriter(env, path, std::move(file), cipher));
  STRATA_RETURN_IF_ERROR(w->Write(EncodePackHeader(version)));
  return w;
}

PackWriter::PackWriter(Env* env, std::string tmp_path, std::unique_ptr<WritableFile> file,
                       const StoreCipher* cipher)
    : env_(env), tmp_path_(std::move(tmp_path)), file_(std::move(file)), cipher_(cipher) {}

PackWriter::~PackWriter() {
  if (!finished_) {
    // An abandoned pack: nothing refers to it, so a failure to close or
    // delete it loses nothing (Store::Open removes leftovers in tmp/ too).
    file_->Close().IgnoreError();
    env_->RemoveFile(tmp_path_).IgnoreError();
  }
}

Status PackWriter::WriteBuffer() {
  if (buffer_.empty()) return Status::Ok();
  // A failed append leaves the file as it was (WritableFile cuts a short
  // write back): the bytes stay here for the next try.
  STRATA_RETURN_IF_ERROR(file_->Append(buffer_));
  buffer_.clear();
  return Status::Ok();
}

Status PackWriter::Write(std::string_view data) {
  STRATA_RETURN_IF_ERROR(broken_);
  if (data.size() < kBufferedObject) {
    if (buffer_.size() + data.size() > kBufferBytes) STRATA_RETURN_IF_ERROR(WriteBuffer());
    buffer_.append(data);
  } else {
    STRATA_RETURN_IF_ERROR(WriteBuffer());
    STRATA_RETURN_IF_ERROR(file_->Append(data));
  }
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
  STRATA_RETURN_IF_ERROR(broken_);
  const uint64_t footer_offset = size_;
  std::string tail = EncodePackFooter(entries_);
  if (cipher_ != nullptr) {
    // An encrypted store's footer says nothing of its objects' ids, types or sizes.
    STRATA_ASSIGN_OR_RETURN(tail, cipher_->SealFooter(tail));
  }
  const uint64_t footer_size = tail.size();
  PutFixed64(&tail, footer_offset);
  PutFixed64(&tail, footer_size);
  tail.append(kPackMagic, sizeof(kPackMagic));
  // The checksum covers everything before it; computed on a copy, so that a
  // failed append (a full disk) leaves this writer as it was, to try again.
  Sha256 whole = checksum_.Clone();
  whole.Update(tail);
  Hash sum = whole.Finish();
  tail.append(reinterpret_cast<const char*>(sum.bytes.data()), Hash::kSize);
  STRATA_RETURN_IF_ERROR(WriteBuffer());
  STRATA_RETURN_IF_ERROR(file_->Append(tail));
  size_ += tail.size();
  // A failed fsync may have lost pages for good: no second try trusts it.
  if (Status s = file_->Sync(); !s.ok()) return broken_ = s;
  if (Status s = file_->Close(); !s.ok()) return broken_ = s;

  SealedPack sealed;
  sealed.local_path = tmp_path_;
  sealed.name = sum.ToHex() + kPackSuffix;
  sealed.size = size_;
  sealed.entries = std::move(entries_);
  finished_ = true;  // the file now belongs to whoever publishes it
  return sealed;
}

}  // namespace strata
