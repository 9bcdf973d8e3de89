import { probe } from '@tilekit/numeric'; console.log(probe)
