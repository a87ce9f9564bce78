/** Handlers of the `archive_` service: thin over src/archive/service.ts. */
import type { ArchiveHandlers } from '../../generated/handlers.ts'
import type { ArchiveService } from '../archive/service.ts'

export function createArchiveHandlers(modules: { archive: ArchiveService }): ArchiveHandlers {
  const { archive } = modules
  return {
    archive_snapshot: ([blockNumber]) => archive.snapshot(Number(blockNumber)),
    archive_querySnapshotExist: ([id]) => archive.querySnapshotExist(id),
    archive_readSnapshot: ([id]) => archive.readSnapshot(id),
    archive_listSnapshot: () => archive.listSnapshot(),
    archive_deleteSnapshot: ([id]) => {
      archive.deleteSnapshot(id)
      return true
    },
    archive_checkSnapshot: ([id]) => archive.checkSnapshot(id),
    archive_archive: async ([id, sync]) => {
      await archive.archive(id, sync)
      return true as const
    },
    archive_restore: async ([id, sync]) => {
      await archive.restore(id, sync)
      return true as const
    },
    archive_restoreAll: async ([sync]) => {
      await archive.restoreAll(sync)
      return true as const
    },
    archive_queryArchiveExist: ([id]) => archive.queryArchiveExist(id),
  }
}
